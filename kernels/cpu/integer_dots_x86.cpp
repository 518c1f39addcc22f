// The x86 integer dot products, compiled three times: for AVX2 (maddubs/madd); with
// SNAPSTREAM_AVX_VNNI and -mavxvnni for AVX-VNNI (dpbusd/dpwssd fuse the multiply, the pairwise
// sums and the accumulation); with SNAPSTREAM_AVX512_VNNI and the AVX-512 flags for AVX-512 VNNI.
// The 32-value block types take groups of weight rows together, so one float step serves a whole
// group: side by side (eight or sixteen rows, their lane sums folded into one register) for few
// activation rows, and for many interleaved (one instruction takes four values of sixteen rows)
// on AVX-512 or transposed block by block (four values of eight rows) on AVX2. On AVX-512 the
// K-quants take sixteen rows side by side too (each row's block is unpacked as before, and the
// sixteen rows' shares of a block are one vector step) and, against many activation rows,
// interleaved block by block as well; on AVX2, Q4_K and Q5_K take eight rows transposed block by
// block against several activation rows. Against one activation row, Q4_K and Q5_K rows go four
// at a time on every instruction set (Q6_K on AVX-512 only). All give the portable variant's
// bits: integer sums are exact and the float steps are the same operations in the same order.
#include <immintrin.h>

#include <climits>
#include <type_traits>
#include <utility>
#include <vector>

#include "kernels/cpu/integer_dot_blocks.h"
#include "kernels/cpu/integer_dots.h"
#include "kernels/cpu/row_group_dots.h"
#ifdef SNAPSTREAM_AVX512_VNNI
#include "kernels/cpu/k_scales16_avx512.h"
#endif

#if defined(SNAPSTREAM_AVX512_VNNI)
#define SNAPSTREAM_INTEGER_DOTS kAvx512VnniIntegerDots
#define SNAPSTREAM_ISA_NAME "avx512-vnni"
#define SNAPSTREAM_VNNI 1
#define SNAPSTREAM_DPBUSD _mm256_dpbusd_epi32
#define SNAPSTREAM_DPWSSD _mm256_dpwssd_epi32
#elif defined(SNAPSTREAM_AVX_VNNI)
#define SNAPSTREAM_INTEGER_DOTS kAvxVnniIntegerDots
#define SNAPSTREAM_ISA_NAME "avx-vnni"
#define SNAPSTREAM_VNNI 1
#define SNAPSTREAM_DPBUSD _mm256_dpbusd_avx_epi32
#define SNAPSTREAM_DPWSSD _mm256_dpwssd_avx_epi32
#else
#define SNAPSTREAM_INTEGER_DOTS kAvx2IntegerDots
#define SNAPSTREAM_ISA_NAME "avx2"
#endif

namespace snapstream::kernels::cpu {
namespace {

using namespace integer_blocks;

// This file is compiled once per instruction set; helpers some of them do not call are [[maybe_unused]].

// acc + (lane l: Σ of the four products u·s of bytes 4l..4l+3), u unsigned and s signed.
[[maybe_unused]] inline __m256i add_byte_products(__m256i acc, __m256i u, __m256i s) {
#ifdef SNAPSTREAM_VNNI
  return SNAPSTREAM_DPBUSD(acc, u, s);
#else
  return _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), _mm256_set1_epi16(1)));
#endif
}

// acc + (lane l: Σ of the four products u·s of bytes 4l..4l+3, each pair's sum times its
// 16-bit scale). Pairs never saturate: u is at most 63 and |s| at most 127.
[[maybe_unused]] inline __m256i add_scaled_byte_products(__m256i acc, __m256i u, __m256i s, __m256i scales16) {
#ifdef SNAPSTREAM_VNNI
  return SNAPSTREAM_DPWSSD(acc, _mm256_maddubs_epi16(u, s), scales16);
#else
  return _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), scales16));
#endif
}

inline int32_t sum_int_lanes(__m256i v) {
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4E));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xB1));
  return _mm_cvtsi128_si32(s);
}

// The lane sums of a and b, as one pair of horizontal adds.
inline void sum_int_lanes(__m256i a, __m256i b, int32_t& sum_a, int32_t& sum_b) {
  const __m256i pairs = _mm256_hadd_epi32(a, b);  // per half: a01 a23 b01 b23
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(pairs), _mm256_extracti128_si256(pairs, 1));
  s = _mm_hadd_epi32(s, s);  // a, b, a, b
  sum_a = _mm_cvtsi128_si32(s);
  sum_b = _mm_extract_epi32(s, 1);
}

inline __m256i load32(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }

inline float f16_at(const std::byte* p) {
  uint16_t bits;
  std::memcpy(&bits, p, 2);
  return _cvtsh_ss(bits);
}

// The f16 values of rows K... (`stride` bytes apart from `first`) as 16-bit words K... of one
// register, for _mm_cvtph_ps/_mm256_cvtph_ps. Several rows' scales written to a float array and
// read back as a vector cost a stall per block: a load cannot take its bytes from several
// smaller stores still in flight. Widened from one register instead, decode of one sequence of
// llama-110m on a 2-core AVX2 EPYC ran 1.06x as fast in Q8_0 and 1.09x in Q4_K.
template <size_t... K>
inline __m128i f16_words(const std::byte* first, int64_t stride, std::index_sequence<K...>) {
  __m128i words = _mm_setzero_si128();
  ((words = _mm_insert_epi16(words, [&] {
      uint16_t bits;
      std::memcpy(&bits, first + static_cast<int64_t>(K) * stride, 2);
      return bits;
    }(), static_cast<int>(K))),
   ...);
  return words;
}
inline __m128 f16s4_at(const std::byte* first, int64_t stride) {
  return _mm_cvtph_ps(f16_words(first, stride, std::make_index_sequence<4>{}));
}
[[maybe_unused]] inline __m256 f16s8_at(const std::byte* first, int64_t stride) {
  return _mm256_cvtph_ps(f16_words(first, stride, std::make_index_sequence<8>{}));
}

// 16 bytes of packed nibbles as 32 values: low nibbles first, then high ones.
inline __m256i nibbles(const std::byte* p) {
  const __m128i packed = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  const __m128i mask = _mm_set1_epi8(0x0F);
  return _mm256_set_m128i(_mm_and_si128(_mm_srli_epi16(packed, 4), mask), _mm_and_si128(packed, mask));
}

__m256i signed_q8_0(const std::byte* block) { return load32(block + 2); }

__m256i signed_q4_0(const std::byte* block) { return _mm256_sub_epi8(nibbles(block + 2), _mm256_set1_epi8(8)); }

__m256i signed_q5_0(const std::byte* block) {
  uint32_t qh;
  std::memcpy(&qh, block + 2, 4);
  // Byte j of the result takes bit j of qh: spread qh's byte j/8 to byte j, keep bit j % 8.
  const __m256i spread = _mm256_shuffle_epi8(_mm256_set1_epi32(static_cast<int>(qh)),
                                             _mm256_set_epi64x(0x0303030303030303, 0x0202020202020202,
                                                               0x0101010101010101, 0x0000000000000000));
  const __m256i bit = _mm256_set1_epi64x(static_cast<int64_t>(0x8040201008040201));
  const __m256i fifth = _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(spread, bit), bit), _mm256_set1_epi8(0x10));
  return _mm256_sub_epi8(_mm256_or_si256(nibbles(block + 6), fifth), _mm256_set1_epi8(16));
}

// Each lane starts at minus the share of the activations' +128 bias, 128 · Σw over its bytes:
// dpbusd's 32-bit sums cannot saturate, so the activations come as unsigned bytes (q + 128)
// and the weights stay signed.
#ifdef SNAPSTREAM_VNNI
inline __m256i bias_start(__m256i weights) {
  const __m256i zero = _mm256_setzero_si256();
  return _mm256_sub_epi32(zero, SNAPSTREAM_DPBUSD(zero, _mm256_set1_epi8(-128), weights));
}
#endif

// A group of rows is read sixteen (or eight) streams at a time, more than the hardware
// prefetcher follows; so while a group is used, the next group's bytes (group_bytes after it)
// are fetched in order, one part at each call of `fetch`. Callers fetch a part per row (or row
// pair) of a block, not per block: a K-quant block's share of sixteen rows is ~40 lines, and
// issued at once they stall on the few misses a core keeps in flight (Q4_K decode on an
// AVX-512 EPYC ran 1.5x faster with the finer parts).
class NextGroupPrefetch {
 public:
  // Nothing is fetched when `wanted` is false (the last group of a band has no next one).
  NextGroupPrefetch(const std::byte* group, int64_t group_bytes, int64_t parts, bool wanted)
      : next_(group + group_bytes), end_(wanted ? group_bytes : 0), part_bytes_((group_bytes + parts - 1) / parts) {}
  void fetch(int64_t part) const {
    for (int64_t at = part * part_bytes_, end = std::min(end_, at + part_bytes_); at < end; at += 64)
      _mm_prefetch(reinterpret_cast<const char*>(next_ + at), _MM_HINT_T0);
  }

 private:
  const std::byte* next_;
  int64_t end_, part_bytes_;
};

// Each row's integer sum of a block, then ggml's float step, block by block (the float steps of
// one row form a chain, so the tile's rows keep the core busy).
template <__m256i (*Signed)(const std::byte*), int64_t BlockBytes, int M>
void q8_family_tile(const std::byte* w, int64_t blocks, const QuantisedRowView* x, float* out, int64_t out_stride) {
  float totals[M] = {};
  for (int64_t b = 0; b < blocks; ++b) {
    const std::byte* block = w + b * BlockBytes;
    const __m256i weights = Signed(block);
    const float d = f16_at(block);
#ifdef SNAPSTREAM_VNNI
    const __m256i start = bias_start(weights);
#else
    // maddubs saturates 16-bit pair sums, so the sign moves onto the activations instead: |w| is
    // at most 128 and |x| at most 127, and a pair stays below 2^15.
    const __m256i magnitudes = _mm256_sign_epi8(weights, weights);
#endif
    __m256i sums[M];
    for (int j = 0; j < M; ++j) {
#ifdef SNAPSTREAM_VNNI
      sums[j] = SNAPSTREAM_DPBUSD(start, load32(x[j].biased + 32 * b), weights);
#else
      sums[j] = add_byte_products(_mm256_setzero_si256(), magnitudes, _mm256_sign_epi8(load32(x[j].q + 32 * b), weights));
#endif
    }
    int j = 0;
    for (; j + 2 <= M; j += 2) {
      int32_t first, second;
      sum_int_lanes(sums[j], sums[j + 1], first, second);
      totals[j] = q8_block_step(totals[j], d, x[j].scales[b], first);
      totals[j + 1] = q8_block_step(totals[j + 1], d, x[j + 1].scales[b], second);
    }
    if (j < M) totals[j] = q8_block_step(totals[j], d, x[j].scales[b], sum_int_lanes(sums[j]));
  }
  for (int j = 0; j < M; ++j) out[j * out_stride] = totals[j];
}

// The integer sums of four rows' lanes, row k's in lane k.
inline __m128i sum_int_lanes4(const __m256i (&sums)[4]) {
  const __m256i quads = _mm256_hadd_epi32(_mm256_hadd_epi32(sums[0], sums[1]), _mm256_hadd_epi32(sums[2], sums[3]));
  return _mm_add_epi32(_mm256_castsi256_si128(quads), _mm256_extracti128_si256(quads, 1));
}

#ifdef SNAPSTREAM_AVX512_VNNI
// Four consecutive weight rows against one activation row (decode of one sequence), block by
// block: four forward streams, which the hardware prefetcher follows better than the sixteen of
// a side-by-side group (Q8_0 decode on an AVX-512 EPYC ran 15-30% faster this way), and four
// independent float chains. Each row's float steps are q8_family_tile's, so the bits are too.
template <__m256i (*Signed)(const std::byte*), int64_t BlockBytes>
void q8_family_rows4(const std::byte* w, int64_t row_stride, int64_t blocks, const QuantisedRowView& x, float* y,
                     bool prefetch_next) {
  __m128 totals = _mm_setzero_ps();
  const NextGroupPrefetch prefetch(w, 4 * row_stride, blocks, prefetch_next);
  for (int64_t b = 0; b < blocks; ++b) {
    const std::byte* block = w + b * BlockBytes;
    prefetch.fetch(b);
    const __m256i activations = load32(x.biased + 32 * b);
    __m256i sums[4];
    for (int k = 0; k < 4; ++k) {
      const __m256i weights = Signed(block + k * row_stride);
      sums[k] = SNAPSTREAM_DPBUSD(bias_start(weights), activations, weights);
    }
    const __m128 scale = _mm_mul_ps(f16s4_at(block, row_stride), _mm_set1_ps(x.scales[b]));
    totals = _mm_add_ps(totals, _mm_mul_ps(_mm_cvtepi32_ps(sum_int_lanes4(sums)), scale));
  }
  _mm_storeu_ps(y, totals);
}

// Sixteen weight rows interleaved, one block at a time: lanes[l] holds values 4l..4l+3 of every
// row (row p in 32-bit lane p) plus 128, the unsigned operand of dpbusd, so one instruction takes
// four values of sixteen rows against four broadcast activations; d holds the rows' scales.
inline constexpr int kGroupRows = 16;
struct alignas(64) GroupBlock {
  __m512i lanes[8];
  __m512 d;
};

// A group's sixteen rows as 32-bit offsets from the first, for gathers.
inline __m512i group_row_offsets(int64_t row_stride) {
  return _mm512_mullo_epi32(_mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0),
                            _mm512_set1_epi32(static_cast<int>(row_stride)));
}

// The f16 in the low half of each 32-bit lane, as floats.
inline __m512 low_f16s(__m512i words) { return _mm512_cvtph_ps(_mm512_cvtepi32_epi16(words)); }

// Block values of rows k (low half) and k + 8 (high half) of a group, as signed bytes.
template <__m256i (*Signed)(const std::byte*)>
inline __m512i row_pair(const std::byte* block, int64_t row_stride, int k) {
  return _mm512_inserti64x4(_mm512_castsi256_si512(Signed(block + k * row_stride)), Signed(block + (k + 8) * row_stride), 1);
}

// 128-bit lanes 0 and 2 (second = false) or 1 and 3 of a and b, interleaved: a's, b's, a's, b's.
inline __m512i pick_lanes(__m512i a, __m512i b, bool second) {
  return _mm512_permutex2var_epi64(a, second ? _mm512_set_epi64(15, 14, 7, 6, 11, 10, 3, 2) : _mm512_set_epi64(13, 12, 5, 4, 9, 8, 1, 0), b);
}

// The first two steps of a transpose of 32-bit words, within 128-bit lanes: afterwards
// out[4i + c] holds word 4L + c of registers 4i..4i+3 of `in` in its 128-bit lane L.
template <int N>
inline void transpose_within_lanes(const __m512i (&in)[N], __m512i (&out)[N]) {
  __m512i pairs[N];
  for (int i = 0; i < N / 2; ++i) {
    pairs[2 * i] = _mm512_unpacklo_epi32(in[2 * i], in[2 * i + 1]);
    pairs[2 * i + 1] = _mm512_unpackhi_epi32(in[2 * i], in[2 * i + 1]);
  }
  for (int i = 0; i < N / 4; ++i) {
    out[4 * i] = _mm512_unpacklo_epi64(pairs[4 * i], pairs[4 * i + 2]);
    out[4 * i + 1] = _mm512_unpackhi_epi64(pairs[4 * i], pairs[4 * i + 2]);
    out[4 * i + 2] = _mm512_unpacklo_epi64(pairs[4 * i + 1], pairs[4 * i + 3]);
    out[4 * i + 3] = _mm512_unpackhi_epi64(pairs[4 * i + 1], pairs[4 * i + 3]);
  }
}

// Rows k (low half) and k + 8 (high half) of z transposed as two 8x8 matrices of 32-bit values:
// afterwards z[l] holds value l of rows 0-7 and then of rows 8-15.
inline void transpose_halves(__m512i (&z)[8]) {
  __m512i u[8];
  transpose_within_lanes(z, u);
  // u[c] (rows 0-3 of each half) and u[c + 4] (rows 4-7) hold values c and c + 4 in their even
  // and odd 128-bit lanes.
  for (int c = 0; c < 4; ++c) {
    z[c] = pick_lanes(u[c], u[c + 4], false);
    z[c + 4] = pick_lanes(u[c], u[c + 4], true);
  }
}

template <__m256i (*Signed)(const std::byte*), int64_t BlockBytes>
void interleave_group(const std::byte* w, int64_t row_stride, int64_t blocks, GroupBlock* out) {
  const __m512i row_offsets = group_row_offsets(row_stride);
  const __m512i bias = _mm512_set1_epi8(static_cast<char>(0x80));
  for (int64_t b = 0; b < blocks; ++b) {
    const std::byte* block = w + b * BlockBytes;
    __m512i z[8];
    for (int k = 0; k < 8; ++k) z[k] = row_pair<Signed>(block, row_stride, k);
    transpose_halves(z);
    for (int l = 0; l < 8; ++l) out[b].lanes[l] = _mm512_xor_si512(z[l], bias);
    // Each row's block starts with its f16 scale: the low half of a 32-bit load.
    out[b].d = low_f16s(_mm512_i32gather_epi32(row_offsets, block, 1));
  }
}

// J activation rows against G interleaved groups (each `blocks` long, one after another), blocks
// [first, last): G * 16 running totals per row. Each group's lanes are loaded once for the J rows
// and each activation broadcast once for the G groups, since loads bound this loop; a row's
// float steps are q8_block_step's, lane by lane.
template <int G, int J>
inline void group_dots(const GroupBlock* groups, int64_t blocks, int64_t first, int64_t last, const QuantisedRowView* x,
                       __m512 (&totals)[G][J]) {
  for (int64_t b = first; b < last; ++b) {
    __m512i sums[G][J];
    for (int j = 0; j < J; ++j)
      for (int g = 0; g < G; ++g) sums[g][j] = _mm512_set1_epi32(x[j].bias_offsets[b]);
    for (int l = 0; l < 8; ++l) {
      __m512i lanes[G];
      for (int g = 0; g < G; ++g) lanes[g] = _mm512_load_si512(&groups[g * blocks + b].lanes[l]);
      for (int j = 0; j < J; ++j) {
        int32_t four;
        std::memcpy(&four, x[j].q + 32 * b + 4 * l, 4);
        const __m512i activations = _mm512_set1_epi32(four);
        for (int g = 0; g < G; ++g) sums[g][j] = _mm512_dpbusd_epi32(sums[g][j], lanes[g], activations);
      }
    }
    for (int j = 0; j < J; ++j) {
      const __m512 a = _mm512_set1_ps(x[j].scales[b]);
      for (int g = 0; g < G; ++g)
        totals[g][j] = _mm512_add_ps(totals[g][j], _mm512_mul_ps(_mm512_cvtepi32_ps(sums[g][j]), _mm512_mul_ps(groups[g * blocks + b].d, a)));
    }
  }
}

// Continues J rows' totals in y over blocks [first, last) (starting them at the first block).
template <int G, int J>
void add_group_dots(const GroupBlock* groups, int64_t blocks, int64_t first, int64_t last, const QuantisedRowView* x, float* y,
                    int64_t y_stride) {
  __m512 totals[G][J];
  for (int j = 0; j < J; ++j)
    for (int g = 0; g < G; ++g)
      totals[g][j] = first == 0 ? _mm512_setzero_ps() : _mm512_loadu_ps(y + j * y_stride + kGroupRows * g);
  group_dots<G, J>(groups, blocks, first, last, x, totals);
  for (int j = 0; j < J; ++j)
    for (int g = 0; g < G; ++g) _mm512_storeu_ps(y + j * y_stride + kGroupRows * g, totals[g][j]);
}

// Blocks per run of interleaved_dots, and how many calls of add_group_dots it makes.
inline constexpr int64_t kRunBlocks = 8;
inline int64_t interleaved_dot_calls(int64_t blocks, int64_t m) { return (blocks + kRunBlocks - 1) / kRunBlocks * ((m + 1) / 2); }

// G interleaved groups against m activation rows, two at a time, in runs of blocks that stay in
// L1 while every row passes; row i's G * 16 results go to y + i * y_stride. The next groups'
// weights are fetched a part per call, spread over the whole computation: fetched while
// interleaving, they stalled it on misses while the products waited.
template <int G>
void interleaved_dots(const GroupBlock* groups, int64_t blocks, const QuantisedRowView* x, int64_t m, float* y,
                      int64_t y_stride, const NextGroupPrefetch& prefetch) {
  int64_t call = 0;
  for (int64_t first = 0; first < blocks; first += kRunBlocks) {
    const int64_t last = std::min(blocks, first + kRunBlocks);
    int64_t i = 0;
    for (; i + 2 <= m; i += 2) {
      prefetch.fetch(call++);
      add_group_dots<G, 2>(groups, blocks, first, last, x + i, y + i * y_stride, y_stride);
    }
    if (i < m) {
      prefetch.fetch(call++);
      add_group_dots<G, 1>(groups, blocks, first, last, x + i, y + i * y_stride, y_stride);
    }
  }
}
#endif

// Rows side by side without interleaving: each row's block meets the activation block in its
// own register, and the lane sums of several rows fold into one register of row sums, so the
// float step still runs once per block for all the rows. Cheaper than interleaving when few
// activation rows share the weights.

// Row p's sum in lane p, from s[p] holding row p's eight lane sums.
[[maybe_unused]] inline __m256i row_sums8(const __m256i (&s)[8]) {
  const __m256i quads0 = _mm256_hadd_epi32(_mm256_hadd_epi32(s[0], s[1]), _mm256_hadd_epi32(s[2], s[3]));
  const __m256i quads1 = _mm256_hadd_epi32(_mm256_hadd_epi32(s[4], s[5]), _mm256_hadd_epi32(s[6], s[7]));
  // quads0: rows 0-3's lanes 0-3 in the low half and lanes 4-7 in the high half; quads1 rows 4-7.
  return _mm256_add_epi32(_mm256_permute2x128_si256(quads0, quads1, 0x20), _mm256_permute2x128_si256(quads0, quads1, 0x31));
}

inline constexpr int kSideRows = 8;
#ifdef SNAPSTREAM_AVX512_VNNI
// Activation rows up to which side-by-side rows beat interleaving.
inline constexpr int64_t kSideMaxRows = 4;
#endif

// Eight weight rows against m activation rows, block by block; totals holds m registers.
// prepare(block) readies a block of the eight rows and returns sums(x, b): the rows' integer sums
// against activation row x's block b, row p in lane p. The float step after it is the same for
// every way of summing, so all give the same bits.
template <int64_t BlockBytes, class Prepare>
void q8_family_rows8(const std::byte* w, int64_t row_stride, int64_t blocks, const QuantisedRowView* x, int64_t m,
                     float* y, int64_t y_stride, __m256* totals, bool prefetch_next, Prepare prepare) {
  for (int64_t j = 0; j < m; ++j) totals[j] = _mm256_setzero_ps();
  const NextGroupPrefetch prefetch(w, kSideRows * row_stride, blocks, prefetch_next);
  for (int64_t b = 0; b < blocks; ++b) {
    const std::byte* block = w + b * BlockBytes;
    prefetch.fetch(b);
    const auto sums = prepare(block);
    const __m256 scales = f16s8_at(block, row_stride);
    for (int64_t j = 0; j < m; ++j) {
      const __m256 scale = _mm256_mul_ps(scales, _mm256_set1_ps(x[j].scales[b]));
      totals[j] = _mm256_add_ps(totals[j], _mm256_mul_ps(_mm256_cvtepi32_ps(sums(x[j], b)), scale));
    }
  }
  for (int64_t j = 0; j < m; ++j) _mm256_storeu_ps(y + j * y_stride, totals[j]);
}

// Eight rows side by side: each row's block meets the activation block in its own register, and
// row_sums8 folds the eight rows' lane sums into one register.
template <__m256i (*Signed)(const std::byte*), int64_t BlockBytes>
void q8_family_side8(const std::byte* w, int64_t row_stride, int64_t blocks, const QuantisedRowView* x, int64_t m,
                     float* y, int64_t y_stride, __m256* totals, bool prefetch_next) {
  q8_family_rows8<BlockBytes>(w, row_stride, blocks, x, m, y, y_stride, totals, prefetch_next, [row_stride](const std::byte* block) {
    __m256i weights[kSideRows], prepared[kSideRows];  // captured by copy below, as arrays
    for (int k = 0; k < kSideRows; ++k) {
      weights[k] = Signed(block + k * row_stride);
#ifdef SNAPSTREAM_VNNI
      prepared[k] = bias_start(weights[k]);
#else
      prepared[k] = _mm256_sign_epi8(weights[k], weights[k]);
#endif
    }
    return [weights, prepared](const QuantisedRowView& row, int64_t b) {
      __m256i lane_sums[kSideRows];
#ifdef SNAPSTREAM_VNNI
      const __m256i activations = load32(row.biased + 32 * b);
      for (int k = 0; k < kSideRows; ++k) lane_sums[k] = SNAPSTREAM_DPBUSD(prepared[k], activations, weights[k]);
#else
      const __m256i activations = load32(row.q + 32 * b);
      for (int k = 0; k < kSideRows; ++k)
        lane_sums[k] = add_byte_products(_mm256_setzero_si256(), prepared[k], _mm256_sign_epi8(activations, weights[k]));
#endif
      return row_sums8(lane_sums);
    };
  });
}

#ifndef SNAPSTREAM_VNNI
// Activation rows from which eight rows transposed block by block (q8_family_quads8) beat eight
// side by side on AVX2 (llama-110m Q8_0 decode on a 2-core EPYC: 0.95x at 2 and 3 sequences,
// 1.11x at 4, 1.15x at 16). The AVX-VNNI variant keeps its own kernels (side-by-side rows, and
// K-quant rows one at a time): no host at hand has AVX-VNNI to measure the trade on.
inline constexpr int64_t kQuadMinRows = 4;

// rows[k]'s eight 32-bit words as words k of quads[0..7]: an 8x8 transpose.
inline void transpose_words8(const __m256i (&rows)[8], __m256i (&quads)[8]) {
  __m256i pairs[8], fours[8];
  for (int k = 0; k < 4; ++k) {
    pairs[2 * k] = _mm256_unpacklo_epi32(rows[2 * k], rows[2 * k + 1]);      // words 0 1 | 4 5 of rows 2k, 2k+1
    pairs[2 * k + 1] = _mm256_unpackhi_epi32(rows[2 * k], rows[2 * k + 1]);  // words 2 3 | 6 7
  }
  for (int h = 0; h < 2; ++h) {  // rows 0-3, then 4-7
    const __m256i* p = pairs + 4 * h;
    fours[4 * h + 0] = _mm256_unpacklo_epi64(p[0], p[2]);  // word 0 | 4 of four rows
    fours[4 * h + 1] = _mm256_unpackhi_epi64(p[0], p[2]);  // word 1 | 5
    fours[4 * h + 2] = _mm256_unpacklo_epi64(p[1], p[3]);  // word 2 | 6
    fours[4 * h + 3] = _mm256_unpackhi_epi64(p[1], p[3]);  // word 3 | 7
  }
  for (int q = 0; q < 4; ++q) {
    quads[q] = _mm256_permute2x128_si256(fours[q], fours[4 + q], 0x20);
    quads[q + 4] = _mm256_permute2x128_si256(fours[q], fours[4 + q], 0x31);
  }
}

// Eight rows with each block transposed so that quads[q] holds values 4q..4q+3 of row p in lane
// p: one broadcast activation quad meets all eight rows in one product, and lane p ends as row
// p's sum with no horizontal adds, which side-by-side rows pay for every activation row and block.
template <__m256i (*Signed)(const std::byte*), int64_t BlockBytes>
void q8_family_quads8(const std::byte* w, int64_t row_stride, int64_t blocks, const QuantisedRowView* x, int64_t m,
                      float* y, int64_t y_stride, __m256* totals, bool prefetch_next) {
  q8_family_rows8<BlockBytes>(w, row_stride, blocks, x, m, y, y_stride, totals, prefetch_next, [row_stride](const std::byte* block) {
    __m256i rows[kSideRows], quads[8];
    for (int k = 0; k < kSideRows; ++k) rows[k] = Signed(block + k * row_stride);
    transpose_words8(rows, quads);
    // The sign moves onto the activations, as in q8_family_tile: pairs stay below 2^15.
    __m256i signs[8], magnitudes[8];
    for (int q = 0; q < 8; ++q) {
      signs[q] = quads[q];
      magnitudes[q] = _mm256_sign_epi8(quads[q], quads[q]);
    }
    return [signs, magnitudes](const QuantisedRowView& row, int64_t b) {
      const int8_t* activations = row.q + 32 * b;
      __m256i sums = _mm256_setzero_si256();
      for (int q = 0; q < 8; ++q) {
        int32_t quad;
        std::memcpy(&quad, activations + 4 * q, sizeof quad);
        sums = add_byte_products(sums, magnitudes[q], _mm256_sign_epi8(_mm256_set1_epi32(quad), signs[q]));
      }
      return sums;
    };
  });
}
#endif

#ifdef SNAPSTREAM_AVX512_VNNI
// Row p's sum in lane p, from z[k] holding row k's eight lane sums in its low half and row
// k + 8's in its high half.
inline __m512i row_sums16(const __m512i (&z)[8]) {
  __m512i pairs[4], quads[2];
  for (int k = 0; k < 4; ++k)
    pairs[k] = _mm512_add_epi32(_mm512_unpacklo_epi32(z[2 * k], z[2 * k + 1]), _mm512_unpackhi_epi32(z[2 * k], z[2 * k + 1]));
  for (int k = 0; k < 2; ++k)
    quads[k] = _mm512_add_epi32(_mm512_unpacklo_epi64(pairs[2 * k], pairs[2 * k + 1]),
                                _mm512_unpackhi_epi64(pairs[2 * k], pairs[2 * k + 1]));
  // quads[0]'s 128-bit lanes: rows 0-3 (lanes 0-3, then 4-7), rows 8-11 (the same); quads[1] rows 4-7 and 12-15.
  return _mm512_add_epi32(pick_lanes(quads[0], quads[1], false), pick_lanes(quads[0], quads[1], true));
}

// Sixteen weight rows against m activation rows, block by block; totals holds m registers.
template <__m256i (*Signed)(const std::byte*), int64_t BlockBytes>
void q8_family_side16(const std::byte* w, int64_t row_stride, int64_t blocks, const QuantisedRowView* x, int64_t m,
                      float* y, int64_t y_stride, __m512* totals, bool prefetch_next) {
  const __m512i row_offsets = group_row_offsets(row_stride);
  const __m512i zero = _mm512_setzero_si512(), biases = _mm512_set1_epi8(-128);
  for (int64_t j = 0; j < m; ++j) totals[j] = _mm512_setzero_ps();
  const NextGroupPrefetch prefetch(w, kGroupRows * row_stride, 8 * blocks, prefetch_next);
  for (int64_t b = 0; b < blocks; ++b) {
    const std::byte* block = w + b * BlockBytes;
    __m512i weights[8], starts[8];
    for (int k = 0; k < 8; ++k) {
      prefetch.fetch(8 * b + k);
      weights[k] = row_pair<Signed>(block, row_stride, k);
      starts[k] = _mm512_sub_epi32(zero, _mm512_dpbusd_epi32(zero, biases, weights[k]));
    }
    const __m512 scales = low_f16s(_mm512_i32gather_epi32(row_offsets, block, 1));
    for (int64_t j = 0; j < m; ++j) {
      const __m512i activations = _mm512_broadcast_i64x4(load32(x[j].biased + 32 * b));
      __m512i lane_sums[8];
      for (int k = 0; k < 8; ++k) lane_sums[k] = _mm512_dpbusd_epi32(starts[k], activations, weights[k]);
      const __m512 scale = _mm512_mul_ps(scales, _mm512_set1_ps(x[j].scales[b]));
      totals[j] = _mm512_add_ps(totals[j], _mm512_mul_ps(_mm512_cvtepi32_ps(row_sums16(lane_sums)), scale));
    }
  }
  for (int64_t j = 0; j < m; ++j) _mm512_storeu_ps(y + j * y_stride, totals[j]);
}
#endif

// The eight 6-bit scales (bytes 0-7) and mins (bytes 8-15) of a Q4_K/Q5_K block, unpacked as
// 32-bit words: unpack_k_scales's bit moves, four bytes at a time.
inline __m128i unpack_k_scales_x86(const std::byte* packed) {
  uint32_t word[3];
  std::memcpy(word, packed, sizeof word);
  const uint32_t low6 = 0x3F3F3F3F, low4 = 0x0F0F0F0F, top2 = 0x03030303;
  const uint32_t scales_low = word[0] & low6, mins_low = word[1] & low6;
  const uint32_t scales_high = (word[2] & low4) | (((word[0] >> 6) & top2) << 4);
  const uint32_t mins_high = ((word[2] >> 4) & low4) | (((word[1] >> 6) & top2) << 4);
  return _mm_set_epi32(static_cast<int>(mins_high), static_cast<int>(mins_low), static_cast<int>(scales_high),
                       static_cast<int>(scales_low));
}

// Byte shuffles that spread 16-bit scales over a register's lanes: bytes[k] puts value k of
// each 128-bit half over all of it; pairs[p] puts value 2p over the low half and 2p + 1 over the
// high one. A constant table, not vectors built at start-up: this file's code may only run once
// the CPU check has chosen it.
struct ScaleSpreads {
  alignas(32) uint8_t bytes[8][32];
  alignas(32) uint8_t pairs[4][32];
  // 512-bit: k_halves[c] puts value 2c over the low 256 bits and 2c + 1 over the high ones;
  // q6_quarters[q] puts value 4q + L over 128-bit lane L.
  alignas(64) uint8_t k_halves[4][64];
  alignas(64) uint8_t q6_quarters[2][64];
};
constexpr ScaleSpreads make_scale_spreads() {
  ScaleSpreads spreads{};
  for (int i = 0; i < 32; i += 2) {
    for (int k = 0; k < 8; ++k) {
      spreads.bytes[k][i] = static_cast<uint8_t>(2 * k);
      spreads.bytes[k][i + 1] = static_cast<uint8_t>(2 * k + 1);
    }
    for (int p = 0; p < 4; ++p) {
      const int value = i < 16 ? 2 * p : 2 * p + 1;
      spreads.pairs[p][i] = static_cast<uint8_t>(2 * value);
      spreads.pairs[p][i + 1] = static_cast<uint8_t>(2 * value + 1);
    }
  }
  for (int i = 0; i < 64; i += 2) {
    for (int c = 0; c < 4; ++c) {
      const int value = i < 32 ? 2 * c : 2 * c + 1;
      spreads.k_halves[c][i] = static_cast<uint8_t>(2 * value);
      spreads.k_halves[c][i + 1] = static_cast<uint8_t>(2 * value + 1);
    }
    for (int q = 0; q < 2; ++q) {
      const int value = 4 * q + i / 16;
      spreads.q6_quarters[q][i] = static_cast<uint8_t>(2 * value);
      spreads.q6_quarters[q][i + 1] = static_cast<uint8_t>(2 * value + 1);
    }
  }
  return spreads;
}
constexpr ScaleSpreads kScaleSpreads = make_scale_spreads();

// Each row's share of Q6_K block b, from its lane sums of scale · stored value · activation:
// the +32 stored with every value comes off as 32 · scale against the 16-value sums.
template <int M>
inline void add_q6_k_shares(const std::byte* block, int64_t b, const __m256i (&sums)[M], const QuantisedRowView* x,
                            float (&totals)[M]) {
  const float d = f16_at(block + kQ6_KScale);
  const __m256i offset_scales =
      _mm256_slli_epi16(_mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(block + kQ6_KScales))), 5);
  for (int j = 0; j < M; ++j) {
    const __m256i offsets = _mm256_madd_epi16(load32(x[j].sums16 + 16 * b), offset_scales);
    totals[j] += k_block_share(d, 0.0f, x[j].scales[b], sum_int_lanes(_mm256_sub_epi32(sums[j], offsets)), 0);
  }
}

#ifdef SNAPSTREAM_AVX512_VNNI
// 64 values per 512-bit register. Q4_K/Q5_K: chunk c's 32 bytes of qs fill both halves and the
// high half shifts down a nibble, so values 64c..64c+63 come out in order, as the activations
// lie; the fifth bits are bits 2c (low half) and 2c+1 (high half) of the 32 qh bytes.
// Block b's integer lane sums of scale · value · activation against M activation rows, given
// the block's eight sub-block scales as 16-bit values in every 128-bit lane (scale16).
template <bool FifthBit, int M>
inline void q45_k_scaled_lanes(const std::byte* block, int64_t b, const QuantisedRowView* x, __m512i scale16,
                               __m256i (&scaled)[M]) {
  const __m512i nibble = _mm512_set1_epi8(0x0F), one = _mm512_set1_epi8(1);
  const __m512i half_shifts = _mm512_set_epi64(4, 4, 4, 4, 0, 0, 0, 0);
  const std::byte* qs = block + (FifthBit ? kQ5_KQs : kQ4_KQs);
  [[maybe_unused]] const __m512i qh = FifthBit ? _mm512_broadcast_i64x4(load32(block + kQ5_KQh)) : _mm512_setzero_si512();
  // Even and odd chunks add into separate registers (integers: the order changes nothing).
  __m512i acc[2][M];
  for (auto& half : acc)
    for (auto& a : half) a = _mm512_setzero_si512();
  for (int c = 0; c < 4; ++c) {
    const __m512i packed = _mm512_broadcast_i64x4(load32(qs + 32 * c));
    __m512i values = _mm512_and_si512(_mm512_srlv_epi64(packed, half_shifts), nibble);
    if constexpr (FifthBit) {
      const __m512i bit_shifts = _mm512_set_epi64(2 * c + 1, 2 * c + 1, 2 * c + 1, 2 * c + 1, 2 * c, 2 * c, 2 * c, 2 * c);
      values = _mm512_or_si512(values, _mm512_slli_epi16(_mm512_and_si512(_mm512_srlv_epi64(qh, bit_shifts), one), 4));
    }
    const __m512i scales = _mm512_shuffle_epi8(scale16, _mm512_load_si512(kScaleSpreads.k_halves[c]));
    for (int j = 0; j < M; ++j)
      acc[c % 2][j] = _mm512_dpwssd_epi32(
          acc[c % 2][j], _mm512_maddubs_epi16(values, _mm512_loadu_si512(x[j].q + 256 * b + 64 * c)), scales);
  }
  for (int j = 0; j < M; ++j) {
    const __m512i both = _mm512_add_epi32(acc[0][j], acc[1][j]);
    scaled[j] = _mm256_add_epi32(_mm512_castsi512_si256(both), _mm512_extracti64x4_epi64(both, 1));
  }
}

// q45_k_scaled_lanes with the block's own scales unpacked, and mins[j]: eight lanes of
// min · (sums of 16 activations), each min twice.
template <bool FifthBit, int M>
inline void q45_k_lanes(const std::byte* block, int64_t b, const QuantisedRowView* x, __m256i (&scaled)[M],
                        __m256i (&mins)[M]) {
  const __m128i scales_and_mins = unpack_k_scales_x86(block + kKScales);
  const __m128i min16 = _mm_cvtepu8_epi16(_mm_unpackhi_epi64(scales_and_mins, scales_and_mins));
  const __m256i min_pairs = _mm256_set_m128i(_mm_unpackhi_epi16(min16, min16), _mm_unpacklo_epi16(min16, min16));
  q45_k_scaled_lanes<FifthBit, M>(block, b, x, _mm512_broadcast_i32x4(_mm_cvtepu8_epi16(scales_and_mins)), scaled);
  for (int j = 0; j < M; ++j) mins[j] = _mm256_madd_epi16(load32(x[j].sums16 + 16 * b), min_pairs);
}

// The scales and mins of one block in sixteen rows, unpacked side by side, the rows' words
// gathered row_offsets apart.
inline KScales16 unpack_k_scales16(const std::byte* packed, __m512i row_offsets) {
  return unpack_k_scale_words(_mm512_i32gather_epi32(row_offsets, packed, 1), _mm512_i32gather_epi32(row_offsets, packed + 4, 1),
                              _mm512_i32gather_epi32(row_offsets, packed + 8, 1));
}

// The sixteen rows' scales widened to 16 bits, four rows per register: interleaving scales[0]
// and scales[1] puts rows 4L and 4L + 1 (first) or 4L + 2 and 4L + 3 (second) in 128-bit lane L,
// so wide[0] holds rows 0 1 4 5, wide[1] rows 8 9 12 13, wide[2] rows 2 3 6 7, wide[3] rows 10 11 14 15.
struct KRowScales16 {
  __m512i wide[4];

  explicit KRowScales16(const KScales16& unpacked) {
    const __m512i first = _mm512_unpacklo_epi32(unpacked.scales[0], unpacked.scales[1]);
    const __m512i second = _mm512_unpackhi_epi32(unpacked.scales[0], unpacked.scales[1]);
    wide[0] = _mm512_cvtepu8_epi16(_mm512_castsi512_si256(first));
    wide[1] = _mm512_cvtepu8_epi16(_mm512_extracti64x4_epi64(first, 1));
    wide[2] = _mm512_cvtepu8_epi16(_mm512_castsi512_si256(second));
    wide[3] = _mm512_cvtepu8_epi16(_mm512_extracti64x4_epi64(second, 1));
  }
  // Row r's eight scales in every 128-bit lane, as q45_k_scaled_lanes takes them.
  __m512i row(int r) const {
    const int quarter = r / 4, within = r % 4;
    const __m512i& source = wide[(within < 2 ? 0 : 2) + (quarter >= 2 ? 1 : 0)];
    const int64_t lane = 2 * (quarter % 2) + within % 2;
    return _mm512_permutexvar_epi64(_mm512_set_epi64(2 * lane + 1, 2 * lane, 2 * lane + 1, 2 * lane, 2 * lane + 1, 2 * lane,
                                                     2 * lane + 1, 2 * lane),
                                    source);
  }
};

// The sixteen rows' Σ min · (activation sum) of block b against activation row x: the integer
// the mins lanes of q45_k_lanes add up to, one row per lane.
inline __m512i k_mins16(const KScales16& unpacked, const QuantisedRowView& x, int64_t b) {
  alignas(32) int32_t sub_sums[8];  // each 32-value sub-block's activation sum
  _mm256_store_si256(reinterpret_cast<__m256i*>(sub_sums), _mm256_madd_epi16(load32(x.sums16 + 16 * b), _mm256_set1_epi16(1)));
  const __m512i byte = _mm512_set1_epi32(0xFF);
  __m512i total = _mm512_setzero_si512();
  for (int s = 0; s < 8; ++s) {
    const __m512i min = _mm512_and_si512(_mm512_srli_epi32(unpacked.mins[s / 4], 8 * (s % 4)), byte);
    total = _mm512_add_epi32(total, _mm512_mullo_epi32(min, _mm512_set1_epi32(sub_sums[s])));
  }
  return total;
}

// Q4_K/Q5_K, sixteen weight rows side by side: the scales and mins of all sixteen unpacked at
// once per block, the mins' integer sums taken sixteen rows a lane, then the same float steps as
// k_side16 (so the same bits as every other path).
template <bool FifthBit, int M>
void k45_side16(const std::byte* w, int64_t row_stride, int64_t blocks, const QuantisedRowView* x, float* out,
                int64_t out_stride, bool prefetch_next) {
  constexpr int64_t kBytes = FifthBit ? kQ5_KBytes : kQ4_KBytes;
  const __m512i row_offsets = group_row_offsets(row_stride);
  __m512 totals[M];
  for (int j = 0; j < M; ++j) totals[j] = _mm512_setzero_ps();
  const NextGroupPrefetch prefetch(w, kGroupRows * row_stride, 8 * blocks, prefetch_next);
  for (int64_t b = 0; b < blocks; ++b) {
    const std::byte* block = w + b * kBytes;
    const KScales16 unpacked = unpack_k_scales16(block + kKScales, row_offsets);
    const KRowScales16 row_scales(unpacked);
    // Rows k (low half) and k + 8 (high half) in pair k, as row_sums16 takes them.
    __m512i scales[kGroupRows];
#pragma GCC unroll 16
    for (int k = 0; k < kGroupRows; ++k) scales[k] = row_scales.row(k);
    __m512i scaled_pairs[M][8];
    for (int k = 0; k < 8; ++k) {
      prefetch.fetch(8 * b + k);
      __m256i low[M], high[M];
      q45_k_scaled_lanes<FifthBit, M>(block + k * row_stride, b, x, scales[k], low);
      q45_k_scaled_lanes<FifthBit, M>(block + (k + 8) * row_stride, b, x, scales[k + 8], high);
      for (int j = 0; j < M; ++j) scaled_pairs[j][k] = _mm512_inserti64x4(_mm512_castsi256_si512(low[j]), high[j], 1);
    }
    const __m512i heads = _mm512_i32gather_epi32(row_offsets, block, 1);
    const __m512 d = low_f16s(heads);
    const __m512 dmin = low_f16s(_mm512_srli_epi32(heads, 16));
    for (int j = 0; j < M; ++j) {
      const __m512 a = _mm512_set1_ps(x[j].scales[b]);
      const __m512 share =
          _mm512_sub_ps(_mm512_mul_ps(_mm512_mul_ps(d, a), _mm512_cvtepi32_ps(row_sums16(scaled_pairs[j]))),
                        _mm512_mul_ps(_mm512_mul_ps(dmin, a), _mm512_cvtepi32_ps(k_mins16(unpacked, x[j], b))));
      totals[j] = _mm512_add_ps(totals[j], share);
    }
  }
  for (int j = 0; j < M; ++j) _mm512_storeu_ps(out + j * out_stride, totals[j]);
}

// Q6_K, 64 values per register: a half's 64 ql bytes give values 0-63 (low nibbles) and 64-127
// (high nibbles); the two top bits of part p are bits 2p, 2p+1 of the half's 32 qh bytes. The
// +32 stored with every value comes off as 32 · scale against the 16-value sums; mins[j] is zero.
template <int M>
inline void q6_k_block_lanes(const std::byte* block, int64_t b, const QuantisedRowView* x, __m256i (&scaled)[M],
                             __m256i (&mins)[M]) {
  const __m512i nibble = _mm512_set1_epi8(0x0F), two_bits = _mm512_set1_epi8(0x03);
  const auto* scales = reinterpret_cast<const int8_t*>(block + kQ6_KScales);
  __m512i acc[M];
  for (int j = 0; j < M; ++j) acc[j] = _mm512_setzero_si512();
  for (int h = 0; h < 2; ++h) {
    const __m512i low = _mm512_loadu_si512(block + 64 * h);
    const __m512i high = _mm512_broadcast_i64x4(load32(block + kQ6_KQh + 32 * h));
    const __m512i half_scales =
        _mm512_broadcast_i32x4(_mm_cvtepi8_epi16(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(scales + 8 * h))));
    for (int q = 0; q < 2; ++q) {
      const __m512i nib = _mm512_and_si512(q == 0 ? low : _mm512_srli_epi16(low, 4), nibble);
      const __m512i bit_shifts = _mm512_set_epi64(4 * q + 2, 4 * q + 2, 4 * q + 2, 4 * q + 2, 4 * q, 4 * q, 4 * q, 4 * q);
      const __m512i top = _mm512_slli_epi16(_mm512_and_si512(_mm512_srlv_epi64(high, bit_shifts), two_bits), 4);
      const __m512i values = _mm512_or_si512(nib, top);
      const __m512i scale = _mm512_shuffle_epi8(half_scales, _mm512_load_si512(kScaleSpreads.q6_quarters[q]));
      for (int j = 0; j < M; ++j)
        acc[j] = _mm512_dpwssd_epi32(
            acc[j], _mm512_maddubs_epi16(values, _mm512_loadu_si512(x[j].q + 256 * b + 128 * h + 64 * q)), scale);
    }
  }
  const __m256i offset_scales =
      _mm256_slli_epi16(_mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(scales))), 5);
  for (int j = 0; j < M; ++j) {
    const __m256i offsets = _mm256_madd_epi16(load32(x[j].sums16 + 16 * b), offset_scales);
    scaled[j] = _mm256_sub_epi32(_mm256_add_epi32(_mm512_castsi512_si256(acc[j]), _mm512_extracti64x4_epi64(acc[j], 1)),
                                 offsets);
    mins[j] = _mm256_setzero_si256();
  }
}

// A K-quant block of sixteen weight rows interleaved, as dpbusd takes it: quads[l] holds values
// 4l..4l+3 of every row (row p in 32-bit lane p) as stored, unsigned (Q6_K's +32 included);
// scales[s] each row's scale of sub-block s (32 values for Q4_K/Q5_K, 16 for Q6_K); pairs[t] the
// two 16-bit weights each row gives the activations' 16-value sums 2t and 2t + 1 (Q4_K/Q5_K: the
// min of sub-block t twice; Q6_K: 32 times scales 2t and 2t + 1, the share of the +32).
// Interleaving costs about as much as a few activation rows' products, so it pays once many
// activation rows share the block (kKInterleaveMinRows); then each row meets it with one
// instruction per four values of all sixteen rows and no lane sums to fold.
struct alignas(64) KGroupBlock {
  __m512i quads[64];
  __m512i scales[16];
  __m512i pairs[8];
  __m512 d, dmin;
};

// Byte k of every 32-bit lane, as a 32-bit value: unsigned, or sign-extended.
inline __m512i lane_byte(__m512i words, int k) { return _mm512_and_si512(_mm512_srli_epi32(words, 8 * k), _mm512_set1_epi32(0xFF)); }
inline __m512i lane_signed_byte(__m512i words, int k) { return _mm512_srai_epi32(_mm512_slli_epi32(words, 24 - 8 * k), 24); }

// The 64 bytes at `first` in each of sixteen rows, transposed: words[i] holds 32-bit word i of
// every row (row p in lane p). Sixteen loads and 64 shuffles: on an AVX-512 EPYC a third of the
// time of the sixteen gathers it replaces.
inline void transpose_words16(const std::byte* first, int64_t row_stride, __m512i (&words)[16]) {
  __m512i rows[16], t[16];
  for (int p = 0; p < 16; ++p) rows[p] = _mm512_loadu_si512(first + p * row_stride);
  transpose_within_lanes(rows, t);
  // Lane L of the four row quarters side by side.
  for (int c = 0; c < 4; ++c) {
    const __m512i low01 = _mm512_shuffle_i32x4(t[c], t[4 + c], 0x44), high01 = _mm512_shuffle_i32x4(t[c], t[4 + c], 0xEE);
    const __m512i low23 = _mm512_shuffle_i32x4(t[8 + c], t[12 + c], 0x44), high23 = _mm512_shuffle_i32x4(t[8 + c], t[12 + c], 0xEE);
    words[c] = _mm512_shuffle_i32x4(low01, low23, 0x88);
    words[4 + c] = _mm512_shuffle_i32x4(low01, low23, 0xDD);
    words[8 + c] = _mm512_shuffle_i32x4(high01, high23, 0x88);
    words[12 + c] = _mm512_shuffle_i32x4(high01, high23, 0xDD);
  }
}

// Q4_K/Q5_K: 32-bit word 8c + k of qs holds values 64c + 4k.. in its low nibbles and
// 64c + 32 + 4k.. in its high ones (quads 16c + k and 16c + 8 + k); their fifth bits are bits 2c
// and 2c + 1 of qh's word k.
template <bool FifthBit>
void interleave_q45_k(const std::byte* block, int64_t row_stride, __m512i row_offsets, KGroupBlock& out) {
  const __m512i nibble = _mm512_set1_epi8(0x0F), one = _mm512_set1_epi8(1);
  const std::byte* qs = block + (FifthBit ? kQ5_KQs : kQ4_KQs);
  __m512i words[2][16];
  transpose_words16(qs, row_stride, words[0]);
  transpose_words16(qs + 64, row_stride, words[1]);
  // Q5_K's 32 qh bytes and the first 32 of qs: inside the block.
  [[maybe_unused]] __m512i qh[16];
  if constexpr (FifthBit) transpose_words16(block + kQ5_KQh, row_stride, qh);
  for (int c = 0; c < 4; ++c)
    for (int k = 0; k < 8; ++k) {
      const __m512i packed = words[c / 2][8 * (c % 2) + k];
      __m512i low = _mm512_and_si512(packed, nibble), high = _mm512_and_si512(_mm512_srli_epi32(packed, 4), nibble);
      if constexpr (FifthBit) {
        low = _mm512_or_si512(low, _mm512_slli_epi32(_mm512_and_si512(_mm512_srli_epi32(qh[k], 2 * c), one), 4));
        high = _mm512_or_si512(high, _mm512_slli_epi32(_mm512_and_si512(_mm512_srli_epi32(qh[k], 2 * c + 1), one), 4));
      }
      out.quads[16 * c + k] = low;
      out.quads[16 * c + 8 + k] = high;
    }
  const KScales16 unpacked = unpack_k_scales16(block + kKScales, row_offsets);
  for (int s = 0; s < 8; ++s) {
    out.scales[s] = lane_byte(unpacked.scales[s / 4], s % 4);
    const __m512i min = lane_byte(unpacked.mins[s / 4], s % 4);
    out.pairs[s] = _mm512_or_si512(min, _mm512_slli_epi32(min, 16));
  }
  const __m512i heads = _mm512_i32gather_epi32(row_offsets, block, 1);
  out.d = low_f16s(heads);
  out.dmin = low_f16s(_mm512_srli_epi32(heads, 16));
}

// Q6_K, per half h of 128 values: ql words 16h + k and 16h + 8 + k hold values 4k.. and 32 + 4k..
// of the half in their low nibbles and 64 + 4k.. and 96 + 4k.. in their high ones; qh word
// 8h + k gives those four quads their top two bits (bits 0-1, 2-3, 4-5, 6-7).
inline void interleave_q6_k(const std::byte* block, int64_t row_stride, __m512i row_offsets, KGroupBlock& out) {
  const __m512i nibble = _mm512_set1_epi8(0x0F), two_bits = _mm512_set1_epi8(0x03);
  __m512i ql[2][16], qh[16];
  transpose_words16(block, row_stride, ql[0]);
  transpose_words16(block + 64, row_stride, ql[1]);
  transpose_words16(block + kQ6_KQh, row_stride, qh);
  for (int h = 0; h < 2; ++h)
    for (int k = 0; k < 8; ++k) {
      const __m512i low[4] = {ql[h][k], ql[h][8 + k], _mm512_srli_epi32(ql[h][k], 4), _mm512_srli_epi32(ql[h][8 + k], 4)};
      for (int p = 0; p < 4; ++p) {
        const __m512i top = _mm512_slli_epi32(_mm512_and_si512(_mm512_srli_epi32(qh[8 * h + k], 2 * p), two_bits), 4);
        out.quads[32 * h + 8 * p + k] = _mm512_or_si512(_mm512_and_si512(low[p], nibble), top);
      }
    }
  __m512i words[4];
  for (int i = 0; i < 4; ++i) words[i] = _mm512_i32gather_epi32(row_offsets, block + kQ6_KScales + 4 * i, 1);
  for (int s = 0; s < 16; ++s) out.scales[s] = lane_signed_byte(words[s / 4], s % 4);
  for (int t = 0; t < 8; ++t)
    out.pairs[t] = _mm512_or_si512(_mm512_and_si512(_mm512_slli_epi32(out.scales[2 * t], 5), _mm512_set1_epi32(0xFFFF)),
                                   _mm512_slli_epi32(out.scales[2 * t + 1], 21));
  // The f16 d ends the block: the high half of the word two bytes before it, so the gather
  // stays inside the block.
  out.d = low_f16s(_mm512_srli_epi32(_mm512_i32gather_epi32(row_offsets, block + kQ6_KScale - 2, 1), 16));
  out.dmin = _mm512_setzero_ps();
}

// Q6_K as the AVX-512 tiles see it (Q4_K and Q5_K: Q45K, below): block size, lane sums, and
// where a block keeps its f16 d; it has no dmin, and shares with one of zero.
struct Q6K {
  static constexpr int64_t kBytes = kQ6_KBytes;
  static constexpr bool kHasMin = false;
  static constexpr int64_t kScaleAt = kQ6_KScale;
  template <int M>
  static void lanes(const std::byte* block, int64_t b, const QuantisedRowView* x, __m256i (&scaled)[M], __m256i (&mins)[M]) {
    q6_k_block_lanes<M>(block, b, x, scaled, mins);
  }
  static void interleave(const std::byte* block, int64_t row_stride, __m512i row_offsets, KGroupBlock& out) {
    interleave_q6_k(block, row_stride, row_offsets, out);
  }
};

// Sixteen weight rows side by side: each row's lane sums per block, folded into registers of
// sixteen row sums, so the shares of all sixteen rows take one vector step (the same operations
// as k_block_share, lane by lane). out[j * out_stride + p] for row p.
template <class Type, int M>
void k_side16(const std::byte* w, int64_t row_stride, int64_t blocks, const QuantisedRowView* x, float* out,
              int64_t out_stride, bool prefetch_next) {
  const __m512i row_offsets = group_row_offsets(row_stride);
  __m512 totals[M];
  for (int j = 0; j < M; ++j) totals[j] = _mm512_setzero_ps();
  const NextGroupPrefetch prefetch(w, kGroupRows * row_stride, kGroupRows * blocks, prefetch_next);
  for (int64_t b = 0; b < blocks; ++b) {
    const std::byte* block = w + b * Type::kBytes;
    __m256i scaled[kGroupRows][M], mins[kGroupRows][M];
    for (int k = 0; k < kGroupRows; ++k) {
      prefetch.fetch(kGroupRows * b + k);
      Type::template lanes<M>(block + k * row_stride, b, x, scaled[k], mins[k]);
    }
    // The rows' f16 scales in one 32-bit load each that stays inside the block: d, and for
    // Q4_K/Q5_K dmin right after it; Q6_K's d ends its block, so its word starts two bytes earlier.
    const __m512i heads = _mm512_i32gather_epi32(row_offsets, block + Type::kScaleAt - (Type::kHasMin ? 0 : 2), 1);
    const __m512 d = low_f16s(Type::kHasMin ? heads : _mm512_srli_epi32(heads, 16));
    const __m512 dmin = Type::kHasMin ? low_f16s(_mm512_srli_epi32(heads, 16)) : _mm512_setzero_ps();
    for (int j = 0; j < M; ++j) {
      __m512i scaled_pairs[8], mins_pairs[8];
      for (int k = 0; k < 8; ++k) {
        scaled_pairs[k] = _mm512_inserti64x4(_mm512_castsi256_si512(scaled[k][j]), scaled[k + 8][j], 1);
        mins_pairs[k] = _mm512_inserti64x4(_mm512_castsi256_si512(mins[k][j]), mins[k + 8][j], 1);
      }
      const __m512 a = _mm512_set1_ps(x[j].scales[b]);
      const __m512 share = _mm512_sub_ps(_mm512_mul_ps(_mm512_mul_ps(d, a), _mm512_cvtepi32_ps(row_sums16(scaled_pairs))),
                                         _mm512_mul_ps(_mm512_mul_ps(dmin, a), _mm512_cvtepi32_ps(row_sums16(mins_pairs))));
      totals[j] = _mm512_add_ps(totals[j], share);
    }
  }
  for (int j = 0; j < M; ++j) _mm512_storeu_ps(out + j * out_stride, totals[j]);
}

// The shares of block b for G interleaved groups against J activation rows, sixteen rows a lane:
// k_side16's float steps on the same integers. Sub-block by sub-block, each quad loaded once for
// the J rows and each activation broadcast once for the G groups: loads, not products, bound
// this loop (on an AVX-512 EPYC two groups against two rows ran 1.6x the products per second of
// one against one).
template <class Type, int G, int J>
inline void k_group_shares(const KGroupBlock* groups, const QuantisedRowView* x, int64_t b, __m512 (&shares)[G][J]) {
  constexpr int kQuadsPerScale = Type::kHasMin ? 8 : 4, kScales = 64 / kQuadsPerScale;
  const int8_t* a[J];
  for (int j = 0; j < J; ++j) a[j] = x[j].q + 256 * b;
  __m512i scaled[G][J];
  for (auto& row : scaled)
    for (auto& v : row) v = _mm512_setzero_si512();
  for (int s = 0; s < kScales; ++s) {
    __m512i parts[G][J];
    for (auto& row : parts)
      for (auto& v : row) v = _mm512_setzero_si512();
#pragma GCC unroll 8
    for (int q = 0; q < kQuadsPerScale; ++q) {
      const int l = s * kQuadsPerScale + q;
      __m512i quads[G];
      for (int g = 0; g < G; ++g) quads[g] = _mm512_load_si512(&groups[g].quads[l]);
      for (int j = 0; j < J; ++j) {
        int32_t four;
        std::memcpy(&four, a[j] + 4 * l, 4);
        const __m512i activations = _mm512_set1_epi32(four);
        for (int g = 0; g < G; ++g) parts[g][j] = _mm512_dpbusd_epi32(parts[g][j], quads[g], activations);
      }
    }
    for (int g = 0; g < G; ++g)
      for (int j = 0; j < J; ++j) scaled[g][j] = _mm512_add_epi32(scaled[g][j], _mm512_mullo_epi32(parts[g][j], groups[g].scales[s]));
  }
  for (int j = 0; j < J; ++j) {
    __m512i corrections[G];
    for (auto& v : corrections) v = _mm512_setzero_si512();
    for (int t = 0; t < 8; ++t) {
      int32_t two;
      std::memcpy(&two, x[j].sums16 + 16 * b + 2 * t, 4);
      const __m512i sums = _mm512_set1_epi32(two);
      for (int g = 0; g < G; ++g) corrections[g] = _mm512_dpwssd_epi32(corrections[g], groups[g].pairs[t], sums);
    }
    const __m512 scale = _mm512_set1_ps(x[j].scales[b]);
    for (int g = 0; g < G; ++g) {
      // Q4_K/Q5_K: the mins' share is a second term; Q6_K: the +32's comes off the integer sum.
      const __m512i mins = Type::kHasMin ? corrections[g] : _mm512_setzero_si512();
      const __m512i sum = Type::kHasMin ? scaled[g][j] : _mm512_sub_epi32(scaled[g][j], corrections[g]);
      shares[g][j] = _mm512_sub_ps(_mm512_mul_ps(_mm512_mul_ps(groups[g].d, scale), _mm512_cvtepi32_ps(sum)),
                                   _mm512_mul_ps(_mm512_mul_ps(groups[g].dmin, scale), _mm512_cvtepi32_ps(mins)));
    }
  }
}

// Adds J activation rows' shares of block b to y (written, not added, at the first block).
// Not inlined: inlined into the loop over activation rows, GCC hoists the activation offsets out
// of it and spills them, and every product then waits on a reload.
template <class Type, int G, int J>
__attribute__((noinline)) void add_group_shares(const KGroupBlock* groups, const QuantisedRowView* x, int64_t b, float* y,
                                                int64_t y_stride) {
  __m512 shares[G][J];
  k_group_shares<Type, G, J>(groups, x, b, shares);
  for (int j = 0; j < J; ++j)
    for (int g = 0; g < G; ++g) {
      float* out = y + j * y_stride + kGroupRows * g;
      _mm512_storeu_ps(out, _mm512_add_ps(b == 0 ? _mm512_setzero_ps() : _mm512_loadu_ps(out), shares[g][j]));
    }
}

// G groups of sixteen weight rows (G * 16 rows) against m activation rows, block by block: each
// block of each group is interleaved once into a buffer that stays in L1 while every activation
// row meets it, two rows at a time. The next groups' weights are fetched a part per pair of
// rows, spread over the products (see interleaved_dots).
template <class Type, int G>
void k_interleaved(const std::byte* w, int64_t row_stride, int64_t blocks, const QuantisedRowView* x, int64_t m, float* y,
                   int64_t y_stride, bool prefetch_next) {
  const __m512i row_offsets = group_row_offsets(row_stride);
  const int64_t pairs = (m + 1) / 2;
  const NextGroupPrefetch prefetch(w, G * kGroupRows * row_stride, blocks * pairs, prefetch_next);
  KGroupBlock groups[G];
  for (int64_t b = 0; b < blocks; ++b) {
    for (int g = 0; g < G; ++g) Type::interleave(w + g * kGroupRows * row_stride + b * Type::kBytes, row_stride, row_offsets, groups[g]);
    int64_t j = 0;
    for (; j + 2 <= m; j += 2) {
      prefetch.fetch(b * pairs + j / 2);
      add_group_shares<Type, G, 2>(groups, x + j, b, y + j * y_stride, y_stride);
    }
    if (j < m) {
      prefetch.fetch(b * pairs + j / 2);
      add_group_shares<Type, G, 1>(groups, x + j, b, y + j * y_stride, y_stride);
    }
  }
}

#else
// Q4_K and Q5_K, block b's lane sums against M activation rows, per 64 values: 32 bytes of qs
// hold values 0-31 in low nibbles and 32-63 in high ones; Q5_K's fifth bits are bits 2c and 2c+1
// of the 32 qh bytes. scaled[j]: scale · value · activation; mins[j]: min · (16-value activation
// sums), each min twice.
template <bool FifthBit, int M>
inline void q45_k_lanes(const std::byte* block, int64_t b, const QuantisedRowView* x, __m256i (&scaled)[M],
                        __m256i (&mins)[M]) {
  const __m256i nibble = _mm256_set1_epi8(0x0F), one = _mm256_set1_epi8(1);
  const std::byte* qs = block + (FifthBit ? kQ5_KQs : kQ4_KQs);
  [[maybe_unused]] const __m256i qh = FifthBit ? load32(block + kQ5_KQh) : _mm256_setzero_si256();
  const __m128i scales_and_mins = unpack_k_scales_x86(block + kKScales);
  const __m128i min16 = _mm_cvtepu8_epi16(_mm_unpackhi_epi64(scales_and_mins, scales_and_mins));
  const __m256i min_pairs = _mm256_set_m128i(_mm_unpackhi_epi16(min16, min16), _mm_unpacklo_epi16(min16, min16));
  const __m256i scale16 = _mm256_broadcastsi128_si256(_mm_cvtepu8_epi16(scales_and_mins));
  // Low and high halves add into separate accumulators (integers: the order changes nothing),
  // two dependency chains per row, but only for up to three rows: from four on the rows' chains
  // are enough, and eight rows' sixteen accumulators would not fit in AVX2's sixteen registers
  // (spilled, they cost llama-110m Q4_K decode of 16 sequences 15%).
  __m256i high_sums[M];
  for (int j = 0; j < M; ++j) scaled[j] = high_sums[j] = _mm256_setzero_si256();
  for (int c = 0; c < 4; ++c) {
    const __m256i packed = load32(qs + 32 * c);
    __m256i low = _mm256_and_si256(packed, nibble);
    __m256i high = _mm256_and_si256(_mm256_srli_epi16(packed, 4), nibble);
    if constexpr (FifthBit) {
      low = _mm256_or_si256(low, _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 2 * c), one), 4));
      high = _mm256_or_si256(high, _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 2 * c + 1), one), 4));
    }
    const __m256i scale_low = _mm256_shuffle_epi8(scale16, load32(kScaleSpreads.bytes[2 * c]));
    const __m256i scale_high = _mm256_shuffle_epi8(scale16, load32(kScaleSpreads.bytes[2 * c + 1]));
    for (int j = 0; j < M; ++j) {
      const int8_t* a = x[j].q + 256 * b + 64 * c;
      scaled[j] = add_scaled_byte_products(scaled[j], low, load32(a), scale_low);
      if constexpr (M >= 4)
        scaled[j] = add_scaled_byte_products(scaled[j], high, load32(a + 32), scale_high);
      else
        high_sums[j] = add_scaled_byte_products(high_sums[j], high, load32(a + 32), scale_high);
    }
  }
  for (int j = 0; j < M; ++j) {
    scaled[j] = _mm256_add_epi32(scaled[j], high_sums[j]);
    mins[j] = _mm256_madd_epi16(load32(x[j].sums16 + 16 * b), min_pairs);
  }
}

// Without AVX-512, Q6_K keeps a tile of its own (q6_k_tile) and has no lanes function.
struct Q6K {};

// Q6_K, per half of 128 values: part p (32 values) takes a nibble of ql (low for parts 0-1, high
// for 2-3, from the first or second 32 bytes) and bits 2p, 2p+1 of the half's 32 qh bytes.
template <int M>
void q6_k_tile(const std::byte* w, int64_t blocks, const QuantisedRowView* x, float* out, int64_t out_stride) {
  const __m256i nibble = _mm256_set1_epi8(0x0F), two_bits = _mm256_set1_epi8(0x03);
  float totals[M] = {};
  for (int64_t b = 0; b < blocks; ++b) {
    const std::byte* block = w + b * kQ6_KBytes;
    const auto* scales = reinterpret_cast<const int8_t*>(block + kQ6_KScales);
    __m256i acc[2][M];
    for (auto& half : acc)
      for (auto& a : half) a = _mm256_setzero_si256();
    for (int h = 0; h < 2; ++h) {
      // The half's eight scales as 16-bit values, in both 128-bit halves.
      const __m256i half_scales = _mm256_broadcastsi128_si256(
          _mm_cvtepi8_epi16(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(scales + 8 * h))));
      const __m256i low0 = load32(block + 64 * h), low1 = load32(block + 64 * h + 32);
      const __m256i high = load32(block + kQ6_KQh + 32 * h);
      for (int p = 0; p < 4; ++p) {
        const __m256i low = p % 2 == 0 ? low0 : low1;
        const __m256i nib = _mm256_and_si256(p < 2 ? low : _mm256_srli_epi16(low, 4), nibble);
        const __m256i top = _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(high, 2 * p), two_bits), 4);
        const __m256i values = _mm256_or_si256(nib, top);
        const __m256i scale_pair = _mm256_shuffle_epi8(half_scales, load32(kScaleSpreads.pairs[p]));
        // Two chains per row while they fit in registers; one from four rows on (see q45_k_lanes).
        const int set = M >= 4 ? 0 : p % 2;
        for (int j = 0; j < M; ++j)
          acc[set][j] = add_scaled_byte_products(acc[set][j], values, load32(x[j].q + 256 * b + 128 * h + 32 * p), scale_pair);
      }
    }
    __m256i sums[M];
    for (int j = 0; j < M; ++j) sums[j] = _mm256_add_epi32(acc[0][j], acc[1][j]);
    add_q6_k_shares<M>(block, b, sums, x, totals);
  }
  for (int j = 0; j < M; ++j) out[j * out_stride] = totals[j];
}

#endif

// Q4_K and Q5_K as k_tile, k_rows4 and the AVX-512 group tiles see them: block size, lane sums
// (q45_k_lanes of this file's instruction set), and where a block keeps its f16 d and dmin.
template <bool FifthBit>
struct Q45K {
  static constexpr int64_t kBytes = FifthBit ? kQ5_KBytes : kQ4_KBytes;
  static constexpr bool kHasMin = true;
  static constexpr int64_t kScaleAt = 0;
  template <int M>
  static void lanes(const std::byte* block, int64_t b, const QuantisedRowView* x, __m256i (&scaled)[M], __m256i (&mins)[M]) {
    q45_k_lanes<FifthBit, M>(block, b, x, scaled, mins);
  }
#ifdef SNAPSTREAM_AVX512_VNNI
  static void interleave(const std::byte* block, int64_t row_stride, __m512i row_offsets, KGroupBlock& out) {
    interleave_q45_k<FifthBit>(block, row_stride, row_offsets, out);
  }
#endif
};

// One weight row: each block's lane sums summed, then its share (k_block_share) added.
template <class Type, int M>
void k_tile(const std::byte* w, int64_t blocks, const QuantisedRowView* x, float* out, int64_t out_stride) {
  float totals[M] = {};
  for (int64_t b = 0; b < blocks; ++b) {
    const std::byte* block = w + b * Type::kBytes;
    __m256i scaled[M], mins[M];
    Type::template lanes<M>(block, b, x, scaled, mins);
    const float d = f16_at(block + Type::kScaleAt), dmin = Type::kHasMin ? f16_at(block + 2) : 0.0f;
    for (int j = 0; j < M; ++j) {
      int32_t scaled_sum, mins_sum;
      sum_int_lanes(scaled[j], mins[j], scaled_sum, mins_sum);
      totals[j] += k_block_share(d, dmin, x[j].scales[b], scaled_sum, mins_sum);
    }
  }
  for (int j = 0; j < M; ++j) out[j * out_stride] = totals[j];
}

// Four consecutive weight rows against one activation row: q8_family_rows4's access pattern for
// the K-quants, and k_tile's float steps lane by lane (so its bits).
template <class Type>
void k_rows4(const std::byte* w, int64_t row_stride, int64_t blocks, const QuantisedRowView& x, float* y,
             bool prefetch_next) {
  __m128 totals = _mm_setzero_ps();
  const NextGroupPrefetch prefetch(w, 4 * row_stride, 4 * blocks, prefetch_next);
  for (int64_t b = 0; b < blocks; ++b) {
    __m256i scaled[4], mins[4];
    const std::byte* first = w + b * Type::kBytes;
    for (int k = 0; k < 4; ++k) {
      prefetch.fetch(4 * b + k);
      __m256i row_scaled[1], row_mins[1];
      Type::template lanes<1>(first + k * row_stride, b, &x, row_scaled, row_mins);
      scaled[k] = row_scaled[0];
      mins[k] = row_mins[0];
    }
    const __m128 d = f16s4_at(first + Type::kScaleAt, row_stride);
    const __m128 dmin = Type::kHasMin ? f16s4_at(first + 2, row_stride) : _mm_setzero_ps();
    const __m128 a = _mm_set1_ps(x.scales[b]);
    const __m128 share = _mm_sub_ps(_mm_mul_ps(_mm_mul_ps(d, a), _mm_cvtepi32_ps(sum_int_lanes4(scaled))),
                                    _mm_mul_ps(_mm_mul_ps(dmin, a), _mm_cvtepi32_ps(sum_int_lanes4(mins))));
    totals = _mm_add_ps(totals, share);
  }
  _mm_storeu_ps(y, totals);
}

#ifndef SNAPSTREAM_VNNI
// Activation rows from which k45_quads8 beats a row at a time (k_tile): from two on (llama-110m
// Q4_K decode on a 2-core EPYC: 1.11x at 2 sequences, 1.15x at 3, 1.18x at 4, 1.33x at 16).
inline constexpr int64_t kKQuadMinRows = 2;

// Q4_K/Q5_K, eight weight rows against m activation rows on AVX2, each block's eight rows
// transposed as q8_family_quads8 does: quads[s][q] holds values 32s+4q..+3 of row p in lane p,
// scales[s] and mins[s] row p's scale and min of sub-block s in both 16-bit halves of lane p.
// The weights are unsigned, so no signs move; products of a 4-bit value (5-bit) and an
// activation, summed over eight quads (four), stay below 2^15, so one madd per sub-block applies
// the scale. Lane p ends as row p's integer sums, and the float step is k_rows4's, lane by lane.
template <bool FifthBit>
void k45_quads8(const std::byte* w, int64_t row_stride, int64_t blocks, const QuantisedRowView* x, int64_t m, float* y,
                int64_t y_stride, __m256* totals, bool prefetch_next) {
  constexpr int64_t kBytes = FifthBit ? kQ5_KBytes : kQ4_KBytes;
  constexpr int kQuadsPerMadd = FifthBit ? 4 : 8;
  const __m256i nibble = _mm256_set1_epi8(0x0F), one = _mm256_set1_epi8(1);
  for (int64_t j = 0; j < m; ++j) totals[j] = _mm256_setzero_ps();
  const NextGroupPrefetch prefetch(w, kSideRows * row_stride, blocks, prefetch_next);
  __m256i quads[8][8];
  for (int64_t b = 0; b < blocks; ++b) {
    const std::byte* block = w + b * kBytes;
    prefetch.fetch(b);
    __m256i scales[8], mins[8];
    {
      __m256i row_scales[kSideRows], row_mins[kSideRows];
      for (int k = 0; k < kSideRows; ++k) {
        const __m128i scales_and_mins = unpack_k_scales_x86(block + k * row_stride + kKScales);
        const __m256i scale32 = _mm256_cvtepu8_epi32(scales_and_mins);
        const __m256i min32 = _mm256_cvtepu8_epi32(_mm_unpackhi_epi64(scales_and_mins, scales_and_mins));
        row_scales[k] = _mm256_or_si256(scale32, _mm256_slli_epi32(scale32, 16));
        row_mins[k] = _mm256_or_si256(min32, _mm256_slli_epi32(min32, 16));
      }
      transpose_words8(row_scales, scales);
      transpose_words8(row_mins, mins);
    }
    for (int c = 0; c < 4; ++c) {
      __m256i low[kSideRows], high[kSideRows];
      for (int k = 0; k < kSideRows; ++k) {
        const std::byte* row_block = block + k * row_stride;
        const __m256i packed = load32(row_block + (FifthBit ? kQ5_KQs : kQ4_KQs) + 32 * c);
        low[k] = _mm256_and_si256(packed, nibble);
        high[k] = _mm256_and_si256(_mm256_srli_epi16(packed, 4), nibble);
        if constexpr (FifthBit) {
          const __m256i qh = load32(row_block + kQ5_KQh);
          low[k] = _mm256_or_si256(low[k], _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 2 * c), one), 4));
          high[k] = _mm256_or_si256(high[k], _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 2 * c + 1), one), 4));
        }
      }
      transpose_words8(low, quads[2 * c]);
      transpose_words8(high, quads[2 * c + 1]);
    }
    const __m256 d = f16s8_at(block, row_stride), dmin = f16s8_at(block + 2, row_stride);
    for (int64_t j = 0; j < m; ++j) {
      const int8_t* activations = x[j].q + 256 * b;
      const int16_t* sums16 = x[j].sums16 + 16 * b;
      __m256i scaled = _mm256_setzero_si256(), min_sums = _mm256_setzero_si256();
      for (int s = 0; s < 8; ++s) {
        for (int first = 0; first < 8; first += kQuadsPerMadd) {
          __m256i pairs = _mm256_setzero_si256();
          for (int q = first; q < first + kQuadsPerMadd; ++q) {
            int32_t quad;
            std::memcpy(&quad, activations + 32 * s + 4 * q, sizeof quad);
            pairs = _mm256_add_epi16(pairs, _mm256_maddubs_epi16(quads[s][q], _mm256_set1_epi32(quad)));
          }
          scaled = _mm256_add_epi32(scaled, _mm256_madd_epi16(pairs, scales[s]));
        }
        int32_t sum_pair;  // the sub-block's two 16-value activation sums
        std::memcpy(&sum_pair, sums16 + 2 * s, sizeof sum_pair);
        min_sums = _mm256_add_epi32(min_sums, _mm256_madd_epi16(_mm256_set1_epi32(sum_pair), mins[s]));
      }
      const __m256 a = _mm256_set1_ps(x[j].scales[b]);
      const __m256 share = _mm256_sub_ps(_mm256_mul_ps(_mm256_mul_ps(d, a), _mm256_cvtepi32_ps(scaled)),
                                         _mm256_mul_ps(_mm256_mul_ps(dmin, a), _mm256_cvtepi32_ps(min_sums)));
      totals[j] = _mm256_add_ps(totals[j], share);
    }
  }
  for (int64_t j = 0; j < m; ++j) _mm256_storeu_ps(y + j * y_stride, totals[j]);
}
#endif

// The row count as a template argument keeps each tile's accumulators in registers.
template <template <int> class Tile, int M = 1>
void run_tile(const std::byte* w, int64_t blocks, const QuantisedRowView* x, int m, float* out, int64_t out_stride) {
  if constexpr (M < kTileRows) {
    if (m != M) return run_tile<Tile, M + 1>(w, blocks, x, m, out, out_stride);
  }
  Tile<M>::run(w, blocks, x, out, out_stride);
}

// A band one weight row at a time (band_by_rows) through the row tiles.
template <template <int> class Tile, int64_t BlockValues>
void band_of_tiles(const std::byte* w, int64_t row_stride, int64_t rows, int64_t blocks, const QuantisedRowView* x,
                   int64_t m, float* y, int64_t y_stride) {
  band_by_rows(run_tile<Tile>, w, row_stride, rows, blocks, BlockValues, x, m, y, y_stride);
}

template <__m256i (*Signed)(const std::byte*), int64_t BlockBytes>
struct Q8Family {
  template <int M>
  struct Tile {
    static void run(const std::byte* w, int64_t blocks, const QuantisedRowView* x, float* out, int64_t s) {
      q8_family_tile<Signed, BlockBytes, M>(w, blocks, x, out, s);
    }
  };

  // Groups of rows side by side (few activation rows) or, on AVX-512 with many activation rows,
  // interleaved once per call, and on AVX-512 four rows at a time against one activation row;
  // the rows left over, and rows too far apart for 32-bit gather offsets, go one at a time. All
  // give the same bits: a row's float steps are the same.
  static void band(const std::byte* w, int64_t row_stride, int64_t rows, int64_t blocks, const QuantisedRowView* x,
                   int64_t m, float* y, int64_t y_stride) {
    int64_t r = 0;
#ifdef SNAPSTREAM_AVX512_VNNI
    if (m == 1) {
      for (; r + 4 <= rows; r += 4) q8_family_rows4<Signed, BlockBytes>(w + r * row_stride, row_stride, blocks, x[0], y + r, r + 8 <= rows);
    } else if (row_stride <= INT32_MAX / kGroupRows) {
      if (m > kSideMaxRows) {
        thread_local std::vector<GroupBlock> groups;
        if (groups.size() < static_cast<size_t>(2 * blocks)) groups.resize(static_cast<size_t>(2 * blocks));
        const int64_t calls = interleaved_dot_calls(blocks, m);
        for (; r + 2 * kGroupRows <= rows; r += 2 * kGroupRows) {
          interleave_group<Signed, BlockBytes>(w + r * row_stride, row_stride, blocks, groups.data());
          interleave_group<Signed, BlockBytes>(w + (r + kGroupRows) * row_stride, row_stride, blocks, groups.data() + blocks);
          const NextGroupPrefetch prefetch(w + r * row_stride, 2 * kGroupRows * row_stride, calls, r + 4 * kGroupRows <= rows);
          interleaved_dots<2>(groups.data(), blocks, x, m, y + r, y_stride, prefetch);
        }
        if (r + kGroupRows <= rows) {
          interleave_group<Signed, BlockBytes>(w + r * row_stride, row_stride, blocks, groups.data());
          interleaved_dots<1>(groups.data(), blocks, x, m, y + r, y_stride, NextGroupPrefetch(w, 0, 1, false));
          r += kGroupRows;
        }
      } else {
        __m512 totals[kSideMaxRows];
        for (; r + kGroupRows <= rows; r += kGroupRows)
          q8_family_side16<Signed, BlockBytes>(w + r * row_stride, row_stride, blocks, x, m, y + r, y_stride, totals,
                                               r + 2 * kGroupRows <= rows);
      }
    }
#else
    // Activation rows in chunks, so the totals stay on the stack and the group's weights in L1.
    constexpr int64_t kChunk = 32;
    __m256 totals[kChunk];
    for (; r + kSideRows <= rows; r += kSideRows)
      for (int64_t i = 0; i < m; i += kChunk) {
        const int64_t chunk = std::min(kChunk, m - i);
        const bool prefetch_next = r + 2 * kSideRows <= rows;
#ifndef SNAPSTREAM_VNNI
        if (chunk >= kQuadMinRows) {
          q8_family_quads8<Signed, BlockBytes>(w + r * row_stride, row_stride, blocks, x + i, chunk, y + i * y_stride + r,
                                               y_stride, totals, prefetch_next);
          continue;
        }
#endif
        q8_family_side8<Signed, BlockBytes>(w + r * row_stride, row_stride, blocks, x + i, chunk, y + i * y_stride + r,
                                            y_stride, totals, prefetch_next);
      }
#endif
    if (r < rows) band_of_tiles<Tile, 32>(w + r * row_stride, row_stride, rows - r, blocks, x, m, y + r, y_stride);
  }
};
#ifdef SNAPSTREAM_AVX512_VNNI
template <bool FifthBit>
struct Q45KTiles {
  template <int M>
  struct Tile {
    static void run(const std::byte* w, int64_t blocks, const QuantisedRowView* x, float* out, int64_t s) {
      k_tile<Q45K<FifthBit>, M>(w, blocks, x, out, s);
    }
  };
};
template <int M>
using Q4KTile = Q45KTiles<false>::Tile<M>;
template <int M>
using Q5KTile = Q45KTiles<true>::Tile<M>;
template <int M>
struct Q6KTile {
  static void run(const std::byte* w, int64_t blocks, const QuantisedRowView* x, float* out, int64_t s) {
    k_tile<Q6K, M>(w, blocks, x, out, s);
  }
};

// k_side16 with the activation-row count as a template argument.
template <class Type, int M = 1>
void run_side16(const std::byte* w, int64_t row_stride, int64_t blocks, const QuantisedRowView* x, int m, float* out,
                int64_t out_stride, bool prefetch_next) {
  if constexpr (M < kTileRows) {
    if (m != M) return run_side16<Type, M + 1>(w, row_stride, blocks, x, m, out, out_stride, prefetch_next);
  }
  if constexpr (std::is_same_v<Type, Q45K<false>> || std::is_same_v<Type, Q45K<true>>)
    k45_side16<std::is_same_v<Type, Q45K<true>>, M>(w, row_stride, blocks, x, out, out_stride, prefetch_next);
  else
    k_side16<Type, M>(w, row_stride, blocks, x, out, out_stride, prefetch_next);
}
#else
template <int M>
struct Q4KTile {
  static void run(const std::byte* w, int64_t blocks, const QuantisedRowView* x, float* out, int64_t s) {
    k_tile<Q45K<false>, M>(w, blocks, x, out, s);
  }
};
template <int M>
struct Q5KTile {
  static void run(const std::byte* w, int64_t blocks, const QuantisedRowView* x, float* out, int64_t s) {
    k_tile<Q45K<true>, M>(w, blocks, x, out, s);
  }
};
template <int M>
struct Q6KTile {
  static void run(const std::byte* w, int64_t blocks, const QuantisedRowView* x, float* out, int64_t s) {
    q6_k_tile<M>(w, blocks, x, out, s);
  }
};
#endif

#ifdef SNAPSTREAM_AVX512_VNNI
// Activation rows from which interleaving K-quant groups beats side-by-side rows (llama-110m
// Q4_K decode on an AVX-512 EPYC: even at 5 sequences, 18% faster at 8, 40% at 16).
inline constexpr int64_t kKInterleaveMinRows = 6;
#endif

// A K-quant band: four rows at a time against one activation row (AVX2's Q6_K excepted: it
// keeps a tile of its own); on AVX-512, groups of sixteen rows side by side against a few
// activation rows and interleaved against many; on AVX2, Q4_K/Q5_K groups of eight rows
// transposed against several; the rest one row at a time.
template <class Type, template <int> class Tile>
void k_band(const std::byte* w, int64_t row_stride, int64_t rows, int64_t blocks, const QuantisedRowView* x, int64_t m,
            float* y, int64_t y_stride) {
  int64_t r = 0;
  if (m == 1) {
    if constexpr (requires { Type::kBytes; })
      for (; r + 4 <= rows; r += 4) k_rows4<Type>(w + r * row_stride, row_stride, blocks, x[0], y + r, r + 8 <= rows);
  }
#ifdef SNAPSTREAM_AVX512_VNNI
  else if (m >= kKInterleaveMinRows && row_stride <= INT32_MAX / kGroupRows) {
    for (; r + 2 * kGroupRows <= rows; r += 2 * kGroupRows)
      k_interleaved<Type, 2>(w + r * row_stride, row_stride, blocks, x, m, y + r, y_stride, r + 4 * kGroupRows <= rows);
    if (r + kGroupRows <= rows) {
      k_interleaved<Type, 1>(w + r * row_stride, row_stride, blocks, x, m, y + r, y_stride, false);
      r += kGroupRows;
    }
  }
  else if (row_stride <= INT32_MAX / kGroupRows)
    for (; r + kGroupRows <= rows; r += kGroupRows)
      for (int64_t i = 0; i < m; i += kTileRows)
        run_side16<Type>(w + r * row_stride, row_stride, blocks, x + i, static_cast<int>(std::min<int64_t>(kTileRows, m - i)),
                         y + i * y_stride + r, y_stride, r + 2 * kGroupRows <= rows && i + kTileRows >= m);
#elif !defined(SNAPSTREAM_VNNI)
  else if constexpr (std::is_same_v<Type, Q45K<false>> || std::is_same_v<Type, Q45K<true>>) {
    if (m >= kKQuadMinRows) {
      constexpr int64_t kChunk = 32;  // activation rows per pass, so the totals stay on the stack
      __m256 totals[kChunk];
      for (; r + kSideRows <= rows; r += kSideRows)
        for (int64_t i = 0; i < m; i += kChunk)
          k45_quads8<std::is_same_v<Type, Q45K<true>>>(w + r * row_stride, row_stride, blocks, x + i, std::min(kChunk, m - i),
                                                      y + i * y_stride + r, y_stride, totals, r + 2 * kSideRows <= rows);
    }
  }
#endif
  if (r < rows) band_of_tiles<Tile, 256>(w + r * row_stride, row_stride, rows - r, blocks, x, m, y + r, y_stride);
}

}  // namespace

const IntegerDotKernels SNAPSTREAM_INTEGER_DOTS = {
    SNAPSTREAM_ISA_NAME,
    Q8Family<signed_q8_0, kQ8_0Bytes>::band,
    Q8Family<signed_q4_0, kQ4_0Bytes>::band,
    Q8Family<signed_q5_0, kQ5_0Bytes>::band,
    k_band<Q45K<false>, Q4KTile>,
    k_band<Q45K<true>, Q5KTile>,
    k_band<Q6K, Q6KTile>,
#ifdef SNAPSTREAM_AVX512_VNNI
    q4_k_group_dots_avx512,
    q8_0_group_dots_avx512,
#else
    nullptr,
    nullptr,
#endif
};

}  // namespace snapstream::kernels::cpu
