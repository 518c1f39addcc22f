// Every copy of the float kernels the CPU runs (cpu/float_kernels.h), not only the one chosen:
// the dot products, weighted sums, prefill GEMM and attention products against double-precision
// references at odd lengths, the tile and eight-row forms against single dot products bit for bit
// within a copy, the Q8_0 cache-row products and weighted sums against double-precision sums of
// the widened rows, score scaling and the f16 row conversions bit for bit across copies, Q8_0
// blocks narrowed to quantize_row's bytes and widened to dequantize_row's bits, Q8_K and Q8_0
// activation blocks rounded to quantize_q8_k_block's and quantize_q8_0_block's bytes, and exp
// within 2 ulp everywhere and bit for bit across the copies with fused multiply-adds, as their
// headers promise.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "kernels/activation_rounding.h"
#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/dot.h"
#include "kernels/cpu/float_kernels.h"
#include "kernels/dequantize.h"
#include "kernels/dtype.h"
#include "kernels/quantize.h"
#include "tests/support/random_values.h"

using namespace snapstream::kernels;
using namespace snapstream::kernels::cpu;
using snapstream::test::random_values;

namespace {

constexpr int64_t kLengths[] = {1, 7, 8, 9, 15, 16, 17, 31, 64, 100, 257};

// |got - exact| within a few float roundings of the terms' total size.
void check_close(float got, double exact, double magnitude) {
  CHECK(std::fabs(got - exact) <= 1e-6 * magnitude + 1e-30);
}

// The sum of a[k * a_step] * b[k * b_step] for k < n in double precision, and the sum of the
// terms' sizes, against which check_close measures a float result.
struct ExactSum {
  double exact = 0.0, magnitude = 0.0;
};
ExactSum exact_sum(const float* a, int64_t a_step, const float* b, int64_t b_step, int64_t n) {
  ExactSum sum;
  for (int64_t k = 0; k < n; ++k) {
    const double term = static_cast<double>(a[k * a_step]) * b[k * b_step];
    sum.exact += term;
    sum.magnitude += std::fabs(term);
  }
  return sum;
}
void check_close(float got, const ExactSum& sum, double scale = 1.0) {
  check_close(got, scale * sum.exact, scale * sum.magnitude);
}

std::vector<uint16_t> as_f16(std::vector<float>& values) {
  std::vector<uint16_t> half(values.size());
  for (size_t i = 0; i < values.size(); ++i) values[i] = f16_to_f32(half[i] = f32_to_f16(values[i]));
  return half;
}

}  // namespace

TEST_CASE("the chosen copy is the widest the CPU runs, and the entry points forward to it", "[float_kernels]") {
  const auto copies = runnable_float_kernels();
  REQUIRE(!copies.empty());
  CHECK(&float_kernels() == copies.back());
#if defined(__x86_64__)
  CHECK(std::string(copies.front()->isa) == "x86_64");
  if (runs_x86_64_v3(running_cpu_features())) CHECK(std::string(float_kernels().isa) != "x86_64");
#endif
  const auto w = random_values(77, 1), x = random_values(77, 2);
  const float direct = float_kernels().dot_f32(w.data(), x.data(), 77), forwarded = dot_f32(w.data(), x.data(), 77);
  CHECK(std::memcmp(&direct, &forwarded, sizeof direct) == 0);
}

TEST_CASE("each copy's dot products match double-precision sums, and its tiles match its single products",
          "[float_kernels]") {
  for (const FloatKernels* copy : runnable_float_kernels()) {
    for (const int64_t n : kLengths) {
      INFO("copy " << copy->isa << ", length " << n);
      auto w = random_values(static_cast<size_t>(8 * n), 3);
      const auto x0 = random_values(static_cast<size_t>(n), 4), x1 = random_values(static_cast<size_t>(n), 5);
      const ExactSum f32_sum = exact_sum(w.data(), 1, x0.data(), 1, n);
      check_close(copy->dot_f32(w.data(), x0.data(), n), f32_sum);

      const float* xs[2] = {x0.data(), x1.data()};
      float tile[8];
      copy->dot_f32_tile(w.data(), n, 4, xs, 2, n, tile, 4, nullptr);
      float rows8[8];
      copy->dot_f32_rows8(w.data(), n, x0.data(), n, rows8);
      for (int r = 0; r < 4; ++r)
        for (int j = 0; j < 2; ++j) CHECK(tile[j * 4 + r] == copy->dot_f32(w.data() + r * n, xs[j], n));
      for (int r = 0; r < 8; ++r) CHECK(rows8[r] == copy->dot_f32(w.data() + r * n, x0.data(), n));

      // f16 and bf16 rows: against the widened row's exact sum; the tile against single products.
      const auto half = as_f16(w);
      std::vector<uint16_t> brain(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) brain[static_cast<size_t>(i)] = f32_to_bf16(w[static_cast<size_t>(i)]);
      double half_exact = 0.0, brain_exact = 0.0;
      for (int64_t i = 0; i < n; ++i) {
        half_exact += static_cast<double>(w[static_cast<size_t>(i)]) * x0[static_cast<size_t>(i)];
        brain_exact += static_cast<double>(bf16_to_f32(brain[static_cast<size_t>(i)])) * x0[static_cast<size_t>(i)];
      }
      check_close(copy->dot_f16(half.data(), x0.data(), n), half_exact, 1.01 * f32_sum.magnitude);
      check_close(copy->dot_bf16(brain.data(), x0.data(), n), brain_exact, 1.01 * f32_sum.magnitude);
      float pair[4];
      copy->dot_16bit_tile(DType::F16, half.data(), xs, 2, n, pair, 2);
      CHECK(pair[0] == copy->dot_f16(half.data(), x0.data(), n));
      CHECK(pair[2] == copy->dot_f16(half.data(), x1.data(), n));
      copy->dot_f16_rows8(half.data(), n, x0.data(), n, rows8);
      CHECK(rows8[0] == copy->dot_f32(w.data(), x0.data(), n));  // w holds the f16 values widened
      CHECK(copy->dot_row(DType::F16, reinterpret_cast<const std::byte*>(half.data()), x0.data(), n) ==
            copy->dot_f16(half.data(), x0.data(), n));
    }
  }
}

TEST_CASE("each copy's weighted row sums match double-precision sums, f32 and f16 rows", "[float_kernels]") {
  for (const FloatKernels* copy : runnable_float_kernels()) {
    for (const int64_t width : {1, 8, 13, 16, 64, 72}) {
      INFO("copy " << copy->isa << ", width " << width);
      const int64_t count = 29, heads = 3, stride = width + 2;
      auto rows = random_values(static_cast<size_t>(count * stride), 6);
      const auto weights = random_values(static_cast<size_t>(heads * count), 7);
      const auto half = as_f16(rows);
      std::vector<float> out(static_cast<size_t>(heads * width)), out_half(out.size());
      copy->weighted_row_sums_f32(weights.data(), count, heads, rows.data(), count, stride, width, out.data(), width);
      copy->weighted_row_sums_f16(weights.data(), count, heads, half.data(), count, stride, width, out_half.data(), width);
      for (int64_t h = 0; h < heads; ++h)
        for (int64_t d = 0; d < width; ++d) {
          check_close(out[static_cast<size_t>(h * width + d)],
                      exact_sum(weights.data() + h * count, 1, rows.data() + d, stride, count));
          CHECK(out_half[static_cast<size_t>(h * width + d)] == out[static_cast<size_t>(h * width + d)]);
        }
    }
  }
}

TEST_CASE("each copy's Q8_0 row products and weighted sums match double-precision sums of the widened rows",
          "[float_kernels]") {
  for (const FloatKernels* copy : runnable_float_kernels()) {
    for (const int64_t width : {32, 64, 96, 128}) {
      INFO("copy " << copy->isa << ", width " << width);
      const int64_t count = 11, bytes = row_bytes(DType::Q8_0, width);
      const auto values = random_values(static_cast<size_t>(count * width), 21);
      std::vector<std::byte> rows(static_cast<size_t>(count * bytes));
      for (int64_t s = 0; s < count; ++s) quantize_row(DType::Q8_0, values.data() + s * width, width, rows.data() + s * bytes);
      std::vector<float> widened(values.size());
      for (int64_t s = 0; s < count; ++s) dequantize_row(DType::Q8_0, rows.data() + s * bytes, width, widened.data() + s * width);
      const auto x = random_values(static_cast<size_t>(width), 22);

      float rows8[8];
      copy->dot_q8_0_rows8(rows.data(), bytes, x.data(), width, rows8);
      for (int64_t s = 0; s < 8; ++s) {
        const float single = copy->dot_q8_0(rows.data() + s * bytes, x.data(), width);
        check_close(single, exact_sum(widened.data() + s * width, 1, x.data(), 1, width));
        CHECK(rows8[s] == single);
      }
      // Two heads, then five: the kernels pair heads where they can. Zero weights skip a row.
      for (const int64_t heads : {int64_t{2}, int64_t{5}}) {
        auto weights = random_values(static_cast<size_t>(heads * count), 23);
        for (int64_t h = 0; h < heads; ++h) weights[static_cast<size_t>(h * count + 3)] = 0.0f;
        std::vector<float> out(static_cast<size_t>(heads * width));
        copy->weighted_q8_0_row_sums(weights.data(), count, heads, rows.data(), count, bytes, width, out.data(), width);
        for (int64_t h = 0; h < heads; ++h)
          for (int64_t d = 0; d < width; ++d)
            check_close(out[static_cast<size_t>(h * width + d)],
                        exact_sum(weights.data() + h * count, 1, widened.data() + d, width, count));
      }
    }
  }
}

TEST_CASE("each copy's prefill GEMM matches double-precision sums, writing only its band of columns",
          "[float_kernels]") {
  const int64_t m = 19, rows = 23, cols = 45, band_begin = 5, band_end = 21;
  const auto x = random_values(static_cast<size_t>(m * cols), 9);
  const auto w = random_values(static_cast<size_t>(rows * cols), 10);
  for (const FloatKernels* copy : runnable_float_kernels()) {
    INFO("copy " << copy->isa);
    std::vector<float> y(static_cast<size_t>(m * rows), -7.0f);
    copy->gemm_f32(x.data(), m, w.data() + band_begin * cols, band_end - band_begin, cols, y.data() + band_begin, rows);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t r = 0; r < rows; ++r) {
        const float got = y[static_cast<size_t>(i * rows + r)];
        if (r < band_begin || r >= band_end) {  // outside the band nothing is written
          REQUIRE(got == -7.0f);
          continue;
        }
        check_close(got, exact_sum(x.data() + i * cols, 1, w.data() + r * cols, 1, cols));
      }
  }
}

TEST_CASE("each copy's attention products match double-precision sums through strided rows", "[float_kernels]") {
  // Queries and keys/values interleaved with other heads' columns, as prefill lays them out.
  const int64_t rows = 13, seen = 29, head_dim = 11, q_stride = 37, kv_stride = 23, out_stride = 31;
  const float scale = 0.3f;
  const auto q = random_values(static_cast<size_t>(rows * q_stride), 11);
  const auto keys = random_values(static_cast<size_t>(seen * kv_stride), 12);
  const auto values = random_values(static_cast<size_t>(seen * kv_stride), 13);
  const auto weights = random_values(static_cast<size_t>(rows * seen), 14);
  for (const FloatKernels* copy : runnable_float_kernels()) {
    INFO("copy " << copy->isa);
    std::vector<float> scores(static_cast<size_t>(rows * seen));
    copy->attention_scores_f32(q.data(), q_stride, rows, keys.data(), kv_stride, seen, head_dim, scale, scores.data());
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < seen; ++j)
        check_close(scores[static_cast<size_t>(i * seen + j)],
                    exact_sum(q.data() + i * q_stride, 1, keys.data() + j * kv_stride, 1, head_dim), scale);

    std::vector<float> out(static_cast<size_t>(rows * out_stride), -7.0f);
    copy->attention_values_f32(weights.data(), rows, seen, values.data(), kv_stride, head_dim, out.data(), out_stride);
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t d = 0; d < out_stride; ++d) {
        const float got = out[static_cast<size_t>(i * out_stride + d)];
        if (d >= head_dim) {  // the other heads' columns are left alone
          REQUIRE(got == -7.0f);
          continue;
        }
        check_close(got, exact_sum(weights.data() + i * seen, 1, values.data() + d, kv_stride, seen));
      }
  }
}

TEST_CASE("score scaling and f16 rows give the same bits in every copy, exp in every copy with FMA",
          "[float_kernels]") {
  const auto copies = runnable_float_kernels();
  const FloatKernels& first = *copies.front();
  const int64_t n = 203;
  auto scores = random_values(static_cast<size_t>(n), 8);
  for (float& s : scores) s *= 6.0f;
  scores[5] = -std::numeric_limits<float>::infinity();
  scores[17] = std::numeric_limits<float>::quiet_NaN();
  std::vector<uint8_t> live(static_cast<size_t>(n), 1);
  for (int64_t i = 0; i < n; i += 7) live[static_cast<size_t>(i)] = 0;

  std::vector<float> ref_scaled(scores), ref_widened(static_cast<size_t>(n));
  const float ref_max = first.scale_live_scores(ref_scaled.data(), live.data(), n, 0.125f, -1.0f);
  std::vector<std::byte> ref_narrowed(static_cast<size_t>(2 * n));
  first.narrow_f16_row(scores.data(), n, ref_narrowed.data());
  first.widen_f16_row(ref_narrowed.data(), n, ref_widened.data());
  for (int64_t i = 0; i < n; ++i) {
    uint16_t bits;
    std::memcpy(&bits, ref_narrowed.data() + 2 * i, 2);
    INFO("value " << i);
    CHECK(bits == f32_to_f16(scores[static_cast<size_t>(i)]));
    const float widened = f16_to_f32(bits);
    CHECK(std::memcmp(&ref_widened[static_cast<size_t>(i)], &widened, sizeof widened) == 0);
  }

  const FloatKernels* fused = nullptr;
  for (const FloatKernels* copy : copies) {
    INFO("copy " << copy->isa);
    std::vector<float> exp(static_cast<size_t>(n)), shifted(scores), scaled(scores), widened(static_cast<size_t>(n));
    copy->exp_row(scores.data(), -0.5f, exp.data(), n);
    const float sum = copy->exp_shifted_row(shifted.data(), n, 2.5f);
    const float max = copy->scale_live_scores(scaled.data(), live.data(), n, 0.125f, -1.0f);
    std::vector<std::byte> narrowed(static_cast<size_t>(2 * n));
    copy->narrow_f16_row(scores.data(), n, narrowed.data());
    copy->widen_f16_row(narrowed.data(), n, widened.data());
    const auto same = [](const std::vector<float>& a, const std::vector<float>& b) {
      return std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
    };
    CHECK(same(scaled, ref_scaled));
    CHECK(same(widened, ref_widened));
    CHECK(narrowed == ref_narrowed);
    CHECK(std::memcmp(&max, &ref_max, sizeof max) == 0);
    // exp: within 2 ulp of the exact value in every copy, and the same bits in every copy with
    // fused multiply-adds (all but the x86_64 one).
    for (int64_t i = 0; i < n; ++i) {
      const double exact = std::exp(-0.5 * scores[static_cast<size_t>(i)]);
      if (!std::isfinite(exact)) {  // NaN stays NaN, +inf gives +inf
        CHECK((std::isnan(exact) ? std::isnan(exp[static_cast<size_t>(i)]) : exp[static_cast<size_t>(i)] == exact));
        continue;
      }
      const double ulp = std::ldexp(1.0, std::ilogb(static_cast<float>(exact)) - 23);
      CHECK(std::fabs(exp[static_cast<size_t>(i)] - exact) <= 2.0 * ulp);
    }
    if (std::string(copy->isa) == "x86_64") continue;
    if (fused == nullptr) fused = copy;
    std::vector<float> fused_exp(static_cast<size_t>(n)), fused_shifted(scores);
    fused->exp_row(scores.data(), -0.5f, fused_exp.data(), n);
    const float fused_sum = fused->exp_shifted_row(fused_shifted.data(), n, 2.5f);
    CHECK(same(exp, fused_exp));
    CHECK(same(shifted, fused_shifted));
    CHECK(std::memcmp(&sum, &fused_sum, sizeof sum) == 0);
  }
}

TEST_CASE("Q8_0 blocks narrow to quantize_row's bytes and widen to dequantize_row's bits in every copy", "[float_kernels]") {
  constexpr int64_t kBlocks = 9, kValues = 32 * kBlocks;
  auto values = random_values(static_cast<size_t>(kValues), 19);
  values[40] = 1e4f;  // one block whose scale is set by a single large value
  std::fill_n(values.begin() + 64, 32, 0.0f);  // one of zeros
  // One whose scale is exactly 1 (its largest magnitude 127), so its values' halves are ties,
  // which round away from zero; and one with -0.
  for (int64_t i = 0; i < 32; ++i) values[static_cast<size_t>(96 + i)] = static_cast<float>(i - 16) + (i % 2 ? 0.5f : -0.5f);
  values[96] = -127.0f;
  values[97] = -0.0f;
  // And blocks holding NaN and infinity, which take quantize_row's own path.
  values[130] = std::numeric_limits<float>::quiet_NaN();
  values[170] = -std::numeric_limits<float>::infinity();
  std::vector<std::byte> blocks(static_cast<size_t>(row_bytes(DType::Q8_0, kValues)));
  quantize_row(DType::Q8_0, values.data(), kValues, blocks.data());
  std::vector<float> expected(static_cast<size_t>(kValues));
  dequantize_row(DType::Q8_0, blocks.data(), kValues, expected.data());
  for (const FloatKernels* copy : runnable_float_kernels()) {
    INFO("copy " << copy->isa);
    std::vector<std::byte> narrowed(blocks.size());
    copy->narrow_q8_0_blocks(values.data(), kBlocks, narrowed.data());
    for (int64_t b = 0; b < kBlocks; ++b) {
      INFO("block " << b);
      CHECK(std::memcmp(narrowed.data() + 34 * b, blocks.data() + 34 * b, 34) == 0);
    }
    std::vector<float> widened(static_cast<size_t>(kValues), -1.0f);
    copy->widen_q8_0_blocks(blocks.data(), kBlocks, widened.data());
    CHECK(std::memcmp(widened.data(), expected.data(), widened.size() * sizeof(float)) == 0);
  }
}

TEST_CASE("Q8_K activation blocks round as quantize_q8_k_block does, with their sixteen-value sums, in every copy",
          "[float_kernels]") {
  constexpr int64_t kBlock = 256, kBlocks = 10, kValues = kBlock * kBlocks;
  auto values = random_values(static_cast<size_t>(kValues), 23);
  auto block = [&](int64_t b) { return values.begin() + b * kBlock; };
  for (int64_t i = 0; i < kBlock; ++i) block(1)[i] *= 1e-3f;
  // The largest magnitude held by a positive and a negative value, the negative first, then the
  // positive first: the first holder sets the scale's sign.
  block(2)[10] = -4.0f;
  block(2)[200] = 4.0f;
  block(3)[5] = 4.0f;
  block(3)[9] = -4.0f;
  std::fill(block(4), block(5), 0.0f);
  std::fill(block(5), block(6), -0.0f);
  // Halves between integers once scaled (the extreme -127 makes the scale 1), which round to even.
  for (int64_t i = 0; i < kBlock; ++i) block(6)[i] = static_cast<float>(i % 200 - 100) + 0.5f;
  block(6)[0] = -127.0f;
  for (int64_t i = 0; i < kBlock; ++i) block(7)[i] = -std::fabs(block(7)[i]);  // no positive value
  block(8)[77] = std::numeric_limits<float>::quiet_NaN();
  block(9)[3] = std::numeric_limits<float>::infinity();

  std::vector<int8_t> expected_q(static_cast<size_t>(kValues));
  std::vector<float> expected_scales(static_cast<size_t>(kBlocks));
  std::vector<int16_t> expected_sums(static_cast<size_t>(kValues / 16));
  for (int64_t b = 0; b < kBlocks; ++b)
    quantize_q8_k_block(values.data() + b * kBlock, kBlock, expected_q.data() + b * kBlock,
                        expected_scales[static_cast<size_t>(b)]);
  for (int64_t j = 0; j < kValues / 16; ++j) {
    int sum = 0;
    for (int64_t i = 0; i < 16; ++i) sum += expected_q[static_cast<size_t>(16 * j + i)];
    expected_sums[static_cast<size_t>(j)] = static_cast<int16_t>(sum);
  }
  CHECK(expected_scales[2] > 0.0f);  // -4 first: it maps to -127
  CHECK(expected_scales[3] < 0.0f);
  for (const FloatKernels* copy : runnable_float_kernels()) {
    INFO("copy " << copy->isa);
    std::vector<int8_t> q(static_cast<size_t>(kValues), 99);
    std::vector<float> scales(static_cast<size_t>(kBlocks), -1.0f);
    std::vector<int16_t> sums(static_cast<size_t>(kValues / 16), 999);
    copy->quantize_q8_k_blocks(values.data(), kBlocks, q.data(), scales.data(), sums.data());
    for (int64_t b = 0; b < kBlocks; ++b) {
      INFO("block " << b);
      CHECK(std::memcmp(&scales[static_cast<size_t>(b)], &expected_scales[static_cast<size_t>(b)], sizeof(float)) == 0);
      CHECK(std::memcmp(q.data() + b * kBlock, expected_q.data() + b * kBlock, kBlock) == 0);
      CHECK(std::memcmp(sums.data() + b * 16, expected_sums.data() + b * 16, 16 * sizeof(int16_t)) == 0);
    }
  }
}

TEST_CASE("Q8_0 activation blocks round as quantize_q8_0_block does, with their biased copies, in every copy",
          "[float_kernels]") {
  constexpr int64_t kBlock = 32, kBlocks = 7, kValues = kBlock * kBlocks;
  auto values = random_values(static_cast<size_t>(kValues), 29);
  auto block = [&](int64_t b) { return values.begin() + b * kBlock; };
  std::fill(block(1), block(2), 0.0f);
  std::fill(block(2), block(3), -0.0f);
  // Halves between integers once scaled (largest magnitude 127, so the scale is 1): ties to even.
  for (int64_t i = 0; i < kBlock; ++i) block(3)[i] = static_cast<float>(i * 7 % 200 - 100) + 0.5f;
  block(3)[4] = 127.0f;
  block(4)[0] = 3e4f;  // one large value sets the scale
  block(5)[31] = -std::numeric_limits<float>::infinity();
  block(6)[12] = std::numeric_limits<float>::quiet_NaN();

  std::vector<int8_t> expected_q(static_cast<size_t>(kValues));
  std::vector<float> expected_scales(static_cast<size_t>(kBlocks));
  std::vector<int32_t> expected_offsets(static_cast<size_t>(kBlocks));
  for (int64_t b = 0; b < kBlocks; ++b) {
    quantize_q8_0_block(values.data() + b * kBlock, kBlock, expected_q.data() + b * kBlock,
                        expected_scales[static_cast<size_t>(b)]);
    int32_t sum = 0;
    for (int64_t i = 0; i < kBlock; ++i) sum += expected_q[static_cast<size_t>(b * kBlock + i)];
    expected_offsets[static_cast<size_t>(b)] = -128 * sum;
  }
  for (const FloatKernels* copy : runnable_float_kernels()) {
    INFO("copy " << copy->isa);
    std::vector<int8_t> q(static_cast<size_t>(kValues), 99);
    std::vector<uint8_t> biased(static_cast<size_t>(kValues), 7);
    std::vector<float> scales(static_cast<size_t>(kBlocks), -1.0f);
    std::vector<int32_t> offsets(static_cast<size_t>(kBlocks), 12345);
    copy->quantize_q8_0_blocks(values.data(), kBlocks, q.data(), scales.data(), biased.data(), offsets.data());
    for (int64_t b = 0; b < kBlocks; ++b) {
      INFO("block " << b);
      CHECK(std::memcmp(&scales[static_cast<size_t>(b)], &expected_scales[static_cast<size_t>(b)], sizeof(float)) == 0);
      CHECK(std::memcmp(q.data() + b * kBlock, expected_q.data() + b * kBlock, kBlock) == 0);
      CHECK(offsets[static_cast<size_t>(b)] == expected_offsets[static_cast<size_t>(b)]);
      for (int64_t i = 0; i < kBlock; ++i) {
        const auto at = static_cast<size_t>(b * kBlock + i);
        CHECK(biased[at] == static_cast<uint8_t>(expected_q[at] + 128));
      }
    }
  }
}
