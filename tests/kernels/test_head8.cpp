// The kernels for heads of eight values against the generic ones they stand in for, bit
// for bit (scores against dot_f32/dot_f16, weighted sums against weighted_row_sums), and against
// double-precision references, over every count up to three blocks and several heads, with keys
// and value rows stored as f32 and as f16. Each copy of the kernels the CPU runs is tested (the
// scores exist in the AVX2 and AVX-512 copies, the sums in the AVX-512 one); where none has them
// the test says it was skipped.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "kernels/cpu/float_kernels.h"
#include "kernels/dtype.h"
#include "tests/support/random_values.h"

using namespace snapstream::kernels;
using namespace snapstream::kernels::cpu;
using snapstream::test::random_values;

namespace {
// The values as f16 bits, and those bits widened back (what a reference reads).
std::vector<uint16_t> as_f16(std::vector<float>& values) {
  std::vector<uint16_t> half(values.size());
  for (size_t i = 0; i < values.size(); ++i) values[i] = f16_to_f32(half[i] = f32_to_f16(values[i]));
  return half;
}

// The copies the CPU runs that have `member`, or a skip notice where none has.
template <typename Member>
std::vector<const FloatKernels*> copies_with(Member member) {
  std::vector<const FloatKernels*> copies;
  for (const FloatKernels* copy : runnable_float_kernels())
    if (copy->*member != nullptr) copies.push_back(copy);
  if (copies.empty()) WARN("SKIPPED: no copy of the kernels this CPU runs has them");
  return copies;
}
}  // namespace

TEST_CASE("head8 scores equal dot_f32 and dot_f16 on every key, and the exact dot products", "[head8]") {
  const int64_t heads = GENERATE(1, 2, 3, 5);
  const int64_t stride = 53;  // scores per head row, more than any count below
  for (const FloatKernels* copy : copies_with(&FloatKernels::score_keys_head8_f32))
  for (int64_t count = 0; count <= 48; ++count) {
    INFO("copy " << copy->isa);
    auto keys = random_values(static_cast<size_t>(count * 8), 1 + static_cast<uint32_t>(count));
    const auto q = random_values(static_cast<size_t>(heads * 8), 2);
    auto widened = keys;
    const auto half = as_f16(widened);
    std::vector<float> scores(static_cast<size_t>(heads * stride), -7.0f), half_scores(scores);
    copy->score_keys_head8_f32(q.data(), heads, keys.data(), count, scores.data(), stride);
    copy->score_keys_head8_f16(q.data(), heads, half.data(), count, half_scores.data(), stride);
    for (int64_t h = 0; h < heads; ++h) {
      for (int64_t s = 0; s < count; ++s) {
        INFO("count " << count << " head " << h << " key " << s);
        const size_t at = static_cast<size_t>(h * stride + s);
        CHECK(scores[at] == copy->dot_f32(keys.data() + s * 8, q.data() + h * 8, 8));
        CHECK(half_scores[at] == copy->dot_f16(half.data() + s * 8, q.data() + h * 8, 8));
        double exact = 0.0, magnitude = 0.0;
        for (int64_t d = 0; d < 8; ++d) {
          const double term = static_cast<double>(keys[static_cast<size_t>(s * 8 + d)]) * q[static_cast<size_t>(h * 8 + d)];
          exact += term;
          magnitude += std::fabs(term);
        }
        CHECK(std::fabs(scores[at] - exact) <= 1e-6 * magnitude);
      }
      // Nothing past the count is written.
      for (int64_t s = count; s < stride; ++s) REQUIRE(scores[static_cast<size_t>(h * stride + s)] == -7.0f);
    }
  }
}

TEST_CASE("head8 weighted sums equal weighted_row_sums, skip rows no head weighs, and match the exact sums",
          "[head8]") {
  const int64_t heads = GENERATE(1, 2, 3, 4, 5, 9);
  const int64_t weights_stride = 51, out_stride = 11;
  for (const FloatKernels* copy : copies_with(&FloatKernels::weighted_rows_head8_f32))
  for (int64_t count = 0; count <= 48; ++count) {
    INFO("copy " << copy->isa);
    auto rows = random_values(static_cast<size_t>(count * 8), 3 + static_cast<uint32_t>(count));
    auto weights = random_values(static_cast<size_t>(heads * weights_stride), 4);
    // Every fifth row is an empty entry: no head weighs it, and it holds NaN. Row 2 is weighed
    // by every head but the first.
    const float nan = std::numeric_limits<float>::quiet_NaN();
    for (int64_t s = 0; s < count; s += 5) {
      for (int64_t h = 0; h < heads; ++h) weights[static_cast<size_t>(h * weights_stride + s)] = 0.0f;
      std::fill_n(rows.begin() + s * 8, 8, nan);
    }
    weights[2] = 0.0f;
    auto widened = rows;
    const auto half = as_f16(widened);
    const size_t out_size = static_cast<size_t>(heads * out_stride);
    std::vector<float> fast(out_size, -7.0f), generic(out_size, -7.0f), fast_half(out_size, -7.0f), generic_half(out_size, -7.0f);
    copy->weighted_rows_head8_f32(weights.data(), weights_stride, heads, rows.data(), count, fast.data(), out_stride);
    copy->weighted_row_sums_f32(weights.data(), weights_stride, heads, rows.data(), count, 8, 8, generic.data(), out_stride);
    copy->weighted_rows_head8_f16(weights.data(), weights_stride, heads, half.data(), count, fast_half.data(), out_stride);
    copy->weighted_row_sums_f16(weights.data(), weights_stride, heads, half.data(), count, 8, 8, generic_half.data(),
                                out_stride);
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t d = 0; d < out_stride; ++d) {
        INFO("count " << count << " head " << h << " column " << d);
        const size_t at = static_cast<size_t>(h * out_stride + d);
        if (d >= 8) {  // past a head's eight outputs nothing is written
          REQUIRE(fast[at] == -7.0f);
          continue;
        }
        CHECK(fast[at] == generic[at]);
        CHECK(fast_half[at] == generic_half[at]);
        double exact = 0.0, magnitude = 0.0;
        for (int64_t s = 0; s < count; ++s) {
          const float w = weights[static_cast<size_t>(h * weights_stride + s)];
          if (w == 0.0f) continue;
          exact += static_cast<double>(w) * rows[static_cast<size_t>(s * 8 + d)];
          magnitude += std::fabs(static_cast<double>(w) * rows[static_cast<size_t>(s * 8 + d)]);
        }
        CHECK(std::fabs(fast[at] - exact) <= 1e-6 * magnitude);
      }
  }
}
